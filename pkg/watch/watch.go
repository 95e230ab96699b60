package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/ocenv"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

// Defaults.
const (
	// DefaultSettle is how long a session must be quiet before it is
	// examined: the settle window of scan and fix.
	DefaultSettle = opencode.DefaultSettle
	// DefaultAbandon is how long an unfinished assistant message in a store
	// another process holds open counts as in progress (OpenCode may be
	// running a long tool and writing nothing meanwhile).
	DefaultAbandon = opencode.DefaultAbandon
	// DefaultLockRetry is how long to wait before retrying a session whose
	// store another sessfix is writing.
	DefaultLockRetry = time.Second
	// DefaultBusyRecheck is how often a session left alone as busy is
	// looked at again, to notice that the process holding the store is gone.
	DefaultBusyRecheck = 5 * time.Second
	// DefaultCoalesce is how long database changes are gathered before the
	// database is asked which sessions they touched.
	DefaultCoalesce = 250 * time.Millisecond
)

// batch bounds how many due sessions are examined before events are
// looked at again.
const batch = 32

// Options configure a Watcher.
type Options struct {
	// Stores are the opened stores to watch (shapes.Discover or shapes.Open);
	// none when no store exists yet and Rediscover is set. The watcher
	// closes a store it stops following (replaced, gone) and, when Run
	// returns, every store it follows; closing a store twice is harmless,
	// so the caller may close those it passed as well.
	Stores []store.Store
	// Rediscover opens the stores again, as they were found at the start
	// (shapes.Discover, or shapes.Open over the same paths); an error
	// wrapping store.ErrNotFound means there is none (yet). The watcher
	// calls it when something changed at Places or a store's path names
	// another file or directory than the one opened, and follows what it
	// returns: a store at a new path is added, a store whose path names
	// another file replaces the one opened there, a store no longer
	// returned is dropped until it comes back. Nil: the watcher follows
	// the stores it was given and only warns when one is replaced.
	Rediscover func(ctx context.Context) ([]store.Store, error)
	// Places are where stores are found: data dirs, the paths named. An
	// entry of a place created, renamed or removed, or the place itself
	// (or a parent of it) appearing, being replaced or vanishing, makes
	// the watcher call Rediscover. A place that does not exist yet is
	// watched from its nearest existing parent.
	Places []string
	// Settle is the settle window (opencode.SettlePolicy): the quiet period
	// before a session is examined; zero means DefaultSettle, opencode.NoSettle
	// (any negative value) none.
	Settle time.Duration
	// Abandon is the abandon window (opencode.SettlePolicy): how long an
	// unfinished assistant message counts as in progress while another
	// program has the store open; zero means DefaultAbandon,
	// opencode.NoAbandon (any negative value) none.
	Abandon time.Duration
	// Poll, when positive, replaces fsnotify by polling the stores at this
	// interval (filesystems without inotify: network and some container
	// mounts).
	Poll time.Duration
	// DryRun reports what would be repaired and writes nothing.
	DryRun bool
	// Scan holds the rule filters (Select, Ignore, Sessions). The watcher
	// sets its own Settle and Now.
	Scan scan.Options
	// Fix holds the repair choices (Strategies, Placeholder). The watcher
	// sets its own Now and Scan.
	Fix fix.Options
	// OpenCode, when set, reads what OpenCode reads outside its data dir
	// (config files, the models catalogue: scan.Options.OpenCode). It is
	// called for each session examined, so a config edited while watch
	// runs counts from the next examination. Nil reads none: SF213 checks
	// nothing and a provider the user added counts as no family.
	OpenCode func() *ocenv.Resolver
	// Suppressed, when set, reports findings the user has suppressed (the
	// config file's suppressions): they are never repaired.
	Suppressed func(scan.Finding) bool
	// Write locates the backup journal (and replaces the apply step in
	// tests). Its Scan is set by the watcher.
	Write fix.WriteOptions
	// Clock is the time source; nil means RealClock.
	Clock Clock
	// Report receives every event, from the watcher's goroutine. Nil drops
	// them.
	Report func(Event)
	// LockRetry is the wait before retrying a locked store; zero means
	// DefaultLockRetry.
	LockRetry time.Duration
	// BusyRecheck is how often a busy session is looked at again; zero
	// means DefaultBusyRecheck.
	BusyRecheck time.Duration
	// Coalesce is the wait before asking a changed database what changed;
	// zero means DefaultCoalesce.
	Coalesce time.Duration
	// Activity reports what is seen of other programs using a store. Nil
	// asks the store afresh each time (store.Store.Activity: /proc on Linux;
	// elsewhere nothing is seen, which makes an unfinished message wait
	// for the abandon window).
	Activity func(store.Info) store.Activity
}

// storeState is what the watcher keeps per store.
type storeState struct {
	st   store.Store
	info store.Info
	// root is the absolute store path: the JSON tree, the database or the
	// export file.
	root     string
	exportID string
	refs     map[string]store.SessionRef
	// fps holds, per session, the fingerprint of the content last examined
	// (or last written by a repair): the same content is not examined again.
	fps map[string]string
	// busy holds the fingerprint for which skipped-busy was last reported.
	busy map[string]string
	// msgSession maps message ids to sessions (storage/ trees).
	msgSession map[string]string
	// db follows a SQLite store's changes.
	db *changes
	// dirs are the watched directories of a JSON store; snap the files seen
	// by the last poll.
	dirs map[string]bool
	snap map[string]fileStamp
	// ident is the file or directory opened at root (identity); gone is
	// set while the store is not found; warned once the user was told it
	// was replaced (without Options.Rediscover).
	ident  os.FileInfo
	gone   bool
	warned bool
	// lastDBEvent is when the database last changed, lastContent when its
	// content was last checked, lastQuery when the last change query
	// ended and queryCost how long it took (SQLite).
	lastDBEvent, lastContent, lastQuery time.Time
	queryCost                           time.Duration
}

func newStoreState(st store.Store, root string) *storeState {
	return &storeState{
		st: st, info: st.Info(), root: root,
		refs: map[string]store.SessionRef{}, fps: map[string]string{}, busy: map[string]string{},
		msgSession: map[string]string{}, dirs: map[string]bool{},
	}
}

type fileStamp struct {
	size  int64
	mtime int64
}

// key names one pending session; an empty id is a store's database check.
type key struct {
	store int
	id    string
}

type pending struct {
	due       time.Time
	lastEvent time.Time
}

// Watcher repairs sessions as they change. Create it with New and call Run
// once.
type Watcher struct {
	opts  Options
	clock Clock
	// pipe is the repair pipeline every session goes through, one at a
	// time; settlePolicy decides when a session is quiet.
	pipe         *fix.Pipeline
	settlePolicy opencode.SettlePolicy
	stores       []*storeState
	fsw          *fsnotify.Watcher
	pending      map[key]*pending
	timer        Timer
	armed        bool
	activity     func(store.Info) store.Activity
	// places are Options.Places, absolute; anchored the directories
	// watched for them; placeSnap what the last poll saw there.
	places       []string
	anchored     map[string]bool
	anchorWarned map[string]bool
	placeSnap    map[string]os.FileInfo
	// rediscoverErr is the last Rediscover error reported.
	rediscoverErr string
	// handled, when set (by tests), is called by the loop after each file
	// event it handled, once what the event made due is scheduled.
	handled func(fsnotify.Event)
	// queried, when set (by tests), is called after each change query,
	// before its cost is taken: a fake clock moved there is its duration.
	queried func()
}

// New checks the options and prepares a watcher.
func New(opts Options) (*Watcher, error) {
	if len(opts.Stores) == 0 && opts.Rediscover == nil {
		return nil, errors.New("no store to watch")
	}
	if opts.Poll < 0 {
		return nil, errors.New("the poll interval must not be negative")
	}
	if opts.LockRetry == 0 {
		opts.LockRetry = DefaultLockRetry
	}
	if opts.BusyRecheck == 0 {
		opts.BusyRecheck = DefaultBusyRecheck
	}
	if opts.Coalesce == 0 {
		opts.Coalesce = DefaultCoalesce
	}
	if opts.Clock == nil {
		opts.Clock = RealClock{}
	}
	w := &Watcher{opts: opts, clock: opts.Clock, pending: map[key]*pending{}, activity: opts.Activity,
		anchored: map[string]bool{}, anchorWarned: map[string]bool{}}
	if w.activity == nil {
		// The store followed now at that path: a replaced one is asked
		// no more.
		w.activity = func(info store.Info) store.Activity {
			for _, ss := range w.stores {
				if !ss.gone && ss.info.Path == info.Path {
					return ss.st.Activity()
				}
			}
			return store.Activity{State: store.ActivityUnknown}
		}
	}
	for _, p := range opts.Places {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("cannot resolve %s: %w", p, err)
		}
		w.places = append(w.places, filepath.Clean(abs))
	}
	w.settlePolicy = opencode.SettlePolicy{Settle: opts.Settle, Abandon: opts.Abandon, Activity: w.activity}
	w.pipe = newPipeline(opts, w.activity)
	w.pipe.Write.Rollbacks = w.rolledBack
	for _, st := range opts.Stores {
		info := st.Info()
		root, err := filepath.Abs(info.Path)
		if err != nil {
			return nil, fmt.Errorf("cannot resolve %s: %w", info.Path, err)
		}
		w.stores = append(w.stores, newStoreState(st, filepath.Clean(root)))
	}
	return w, nil
}

// newPipeline builds the watcher's repair pipeline: one session at a time,
// on the watcher's clock, with the watcher's settle policy for the rules,
// and without fix's settle check (the watcher asks the same policy itself,
// in admit).
func newPipeline(opts Options, activity func(store.Info) store.Activity) *fix.Pipeline {
	sopts := opts.Scan
	sopts.Sessions, sopts.Now, sopts.Progress = nil, opts.Clock.Now, nil
	sopts.Settle, sopts.Abandon, sopts.Activity = opts.Settle, opts.Abandon, activity
	fopts := opts.Fix
	fopts.Now, fopts.Scan = opts.Clock.Now, &sopts
	wopts := opts.Write
	wopts.Scan = &sopts
	if wopts.Backup.Now == nil {
		wopts.Backup.Now = opts.Clock.Now
	}
	return &fix.Pipeline{
		Scan: &sopts, Fix: fopts, Sessions: opts.Scan.Sessions, Suppressed: opts.Suppressed,
		Workers: 1, Write: wopts,
	}
}

// retry is how long to wait before trying again what failed because the
// store changed or could not be read: the settle window, and never less
// than the lock retry (with no settle window, not in a loop).
func (w *Watcher) retry() time.Duration {
	return max(w.settlePolicy.Window(), w.opts.LockRetry)
}

func (w *Watcher) report(e Event) {
	if w.opts.Report == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = w.clock.Now()
	}
	w.opts.Report(e)
}

// rolledBack reports, as warnings, what taking a store's writer lock did
// about change sets a killed sessfix left half-written (backup.Lock).
func (w *Watcher) rolledBack(rbs []backup.Rollback) {
	for _, rb := range rbs {
		w.report(Event{Kind: Warning, Session: rb.Session, Backup: rb.RunID, Message: rb.Message()})
	}
}

func (w *Watcher) warn(ss *storeState, msg string, err error) {
	e := Event{Kind: Warning, Message: msg}
	if ss != nil {
		e.Store = refOf(ss.info)
	}
	if err != nil {
		e.Error = err.Error()
	}
	w.report(e)
}

// Run scans every store once, then follows changes until ctx is done. It
// returns nil when ctx ends (after finishing a repair being written), or
// the error that keeps it from watching at all.
func (w *Watcher) Run(ctx context.Context) error {
	defer w.close()
	if err := w.start(ctx); err != nil {
		return err
	}
	return w.loop(ctx)
}

// start opens the file watcher, lists and follows every store, and marks
// every session for the initial scan.
func (w *Watcher) start(ctx context.Context) error {
	if w.opts.Poll == 0 {
		fsw, err := fsnotify.NewWatcher()
		if err != nil {
			return fmt.Errorf("cannot watch for file changes: %w (try --poll)", err)
		}
		w.fsw = fsw
	}
	for _, ss := range w.stores {
		if err := w.setup(ctx, ss); err != nil {
			return err
		}
	}
	// Places are watched after the stores were found: a look for stores
	// again, at once, covers what appeared in between.
	w.anchorPlaces()
	if w.opts.Poll > 0 {
		w.placeSnap = w.placeStamps()
	}
	if w.opts.Rediscover != nil {
		w.pending[rediscoverKey] = &pending{due: w.clock.Now()}
	}
	now := w.clock.Now()
	for i, ss := range w.stores {
		for id := range ss.refs {
			w.pending[key{i, id}] = &pending{due: now}
		}
	}
	w.timer = w.clock.NewTimer(time.Hour)
	w.timer.Stop()
	w.arm()
	mode := "file events"
	if w.opts.Poll > 0 {
		mode = "polling every " + w.opts.Poll.String()
	}
	w.report(Event{Kind: Started, Message: fmt.Sprintf("watching %s (%s), settle %s", plural.Count(len(w.stores), "store", "stores"), mode, w.settlePolicy.Window())})
	if len(w.stores) == 0 {
		w.warn(nil, "no store found yet; waiting for one to appear in "+strings.Join(w.places, ", "), nil)
	}
	return nil
}

// loop is the watcher's one goroutine: file events, poll ticks and due
// sessions, until ctx ends.
func (w *Watcher) loop(ctx context.Context) error {
	var events chan fsnotify.Event
	var errs chan error
	if w.fsw != nil {
		events, errs = w.fsw.Events, w.fsw.Errors
	}
	var tick <-chan time.Time
	var ticker Timer
	if w.opts.Poll > 0 {
		ticker = w.clock.NewTimer(w.opts.Poll)
		tick = ticker.C()
		defer ticker.Stop()
	}
	for {
		var handled *fsnotify.Event
		select {
		case <-ctx.Done():
			w.report(Event{Kind: Stopped, Message: "no more repairs in progress"})
			return nil
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			w.handle(ctx, ev)
			handled = &ev
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			w.watchError(ctx, err)
		case <-tick:
			w.poll(ctx)
			ticker.Reset(w.opts.Poll)
		case <-w.timer.C():
			w.armed = false
			w.runDue(ctx)
		}
		w.arm()
		if handled != nil && w.handled != nil {
			w.handled(*handled)
		}
	}
}

// watchError handles an error from the file watcher: a lost event queue
// means any session may have changed.
func (w *Watcher) watchError(ctx context.Context, err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		w.report(Event{Kind: Rescan, Message: "too many file events at once; examining every session again"})
		w.rescanAll(ctx)
		return
	}
	w.warn(nil, "file watcher error", err)
}

func (w *Watcher) close() {
	if w.fsw != nil {
		w.fsw.Close()
	}
	for _, ss := range w.stores {
		if ss.db != nil {
			ss.db.Close()
		}
		if ss.st != nil {
			ss.st.Close()
		}
	}
	if w.timer != nil {
		w.timer.Stop()
	}
}

// setup lists a store's sessions and starts following it.
func (w *Watcher) setup(ctx context.Context, ss *storeState) error {
	if fi, err := identity(ss.root); err == nil {
		ss.ident = fi
	}
	if err := w.list(ctx, ss); err != nil {
		return err
	}
	switch ss.info.Shape {
	case store.ShapeSQLite:
		db, err := openChanges(ss.root)
		if err != nil {
			return err
		}
		ss.db = db
		if _, err := db.since(ctx, true); err != nil {
			return fmt.Errorf("cannot read the changes of %s: %w", ss.root, err)
		}
		if _, err := db.digest(ctx, true); err != nil {
			return fmt.Errorf("cannot read the changes of %s: %w", ss.root, err)
		}
		ss.lastContent = w.clock.Now()
		if w.opts.Poll > 0 {
			ss.snap = stampFiles(ss.root, ss.root+"-wal")
			return nil
		}
		return w.addWatch(ss, filepath.Dir(ss.root))
	case store.ShapeExport:
		if w.opts.Poll > 0 {
			ss.snap = stampFiles(ss.root)
			return nil
		}
		return w.addWatch(ss, filepath.Dir(ss.root))
	}
	if w.opts.Poll > 0 {
		ss.snap = walkStamps(ss.root)
		return nil
	}
	w.addTree(ss, ss.root, false)
	return nil
}

// list refreshes a store's session refs.
func (w *Watcher) list(ctx context.Context, ss *storeState) error {
	targets, err := w.pipe.Targets(ctx, ss.st)
	if err != nil {
		return err
	}
	ss.refs = map[string]store.SessionRef{}
	for _, t := range targets {
		ss.refs[t.Ref.ID] = t.Ref
	}
	if ss.info.Shape == store.ShapeExport && len(targets) == 1 {
		ss.exportID = targets[0].Ref.ID
	}
	return nil
}

func (w *Watcher) selected(id string) bool {
	return len(w.opts.Scan.Sessions) == 0 || slices.Contains(w.opts.Scan.Sessions, id)
}

func (w *Watcher) addWatch(ss *storeState, dir string) error {
	if err := w.fsw.Add(dir); err != nil {
		return fmt.Errorf("cannot watch %s: %w (for filesystems without inotify, or when the watch limit is reached, use --poll)", dir, err)
	}
	ss.dirs[dir] = true
	return nil
}

// addTree watches dir and every directory under it. With mark set, every
// session found under it is marked changed: it may have been written
// before its watch existed.
func (w *Watcher) addTree(ss *storeState, dir string, mark bool) {
	walkDirs(dir, func(d string, files []string) {
		if !ss.dirs[d] {
			if err := w.fsw.Add(d); err != nil {
				w.warn(ss, "cannot watch "+d+"; changes below it are missed (use --poll, or raise fs.inotify.max_user_watches)", err)
			} else {
				ss.dirs[d] = true
			}
		}
		if !mark {
			return
		}
		if id, ok := ss.sessionOf(d, true); ok {
			w.mark(ss, id)
		}
		for _, f := range files {
			if id, ok := ss.sessionOf(f, false); ok {
				w.mark(ss, id)
			}
		}
	})
}

func (w *Watcher) storeIndex(ss *storeState) int {
	for i, s := range w.stores {
		if s == ss {
			return i
		}
	}
	return -1
}

// mark records a change to a session: it is examined once it has been quiet
// for the settle window.
func (w *Watcher) mark(ss *storeState, id string) {
	if id == "" || !w.selected(id) {
		return
	}
	now := w.clock.Now()
	k := key{w.storeIndex(ss), id}
	p := w.pending[k]
	if p == nil {
		p = &pending{}
		w.pending[k] = p
	}
	p.lastEvent = now
	p.due = now.Add(w.settlePolicy.Window())
}

// queryPace spaces a database's change queries: the next one starts no
// sooner than queryPace times as long as the last one took after it
// ended. The query reads every row (OpenCode has no index on
// time_updated: 0.4 s on a 270 MB database), so while OpenCode streams
// into a large database the watcher spends at most a fifth of a CPU on it
// instead of asking every Coalesce; a session is examined only once its
// settle window has passed anyway.
const queryPace = 4

// maxQueryGap bounds the pace: one query that took long (a machine that
// slept through it, a disk that stalled) never puts the next change off
// for more than this.
const maxQueryGap = time.Minute

// markDB schedules a database check unless one is already due (after
// Coalesce, paced by queryPace), and puts off the check of the database's
// content (checkContent) until the database has been quiet for the settle
// window, and at least contentEvery after the last one.
func (w *Watcher) markDB(ss *storeState) {
	now := w.clock.Now()
	i := w.storeIndex(ss)
	ss.lastDBEvent = now
	due := now.Add(max(w.settlePolicy.Window(), w.opts.Coalesce))
	if next := ss.lastContent.Add(contentEvery); due.Before(next) {
		due = next
	}
	w.pending[key{i, contentKey}] = &pending{due: due}
	k := key{i, ""}
	if w.pending[k] != nil {
		return
	}
	due = now.Add(w.opts.Coalesce)
	if next := ss.lastQuery.Add(min(queryPace*ss.queryCost, maxQueryGap)); due.Before(next) {
		due = next
	}
	w.pending[k] = &pending{due: due}
}

// handle maps one file event to the sessions it changes.
func (w *Watcher) handle(ctx context.Context, ev fsnotify.Event) {
	path := filepath.Clean(ev.Name)
	if d, ok := w.placeEvent(ev, path); ok {
		w.scheduleRediscoverIn(d)
	}
	for _, ss := range w.stores {
		if ss.gone {
			continue
		}
		if path == ss.root && !ev.Has(fsnotify.Write) && !ev.Has(fsnotify.Chmod) && w.checkIdentity(ss) {
			continue
		}
		switch ss.info.Shape {
		case store.ShapeSQLite:
			if ss.sqliteName(path) {
				w.markDB(ss)
			}
			continue
		case store.ShapeExport:
			if path == ss.root {
				if ss.exportID == "" {
					_ = w.list(ctx, ss)
				}
				w.mark(ss, ss.exportID)
			}
			continue
		}
		if path != ss.root && !within(ss.root, path) {
			continue
		}
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			// The path is gone: a removed directory loses its watch; a
			// renamed file is an editor's save or OpenCode's rewrite.
			delete(ss.dirs, path)
			if id, ok := ss.sessionOf(path, false); ok {
				w.mark(ss, id)
			} else if id, ok := ss.sessionOf(path, true); ok {
				w.mark(ss, id)
			}
			continue
		}
		if ev.Has(fsnotify.Create) && isDir(path) {
			w.addTree(ss, path, true)
			continue
		}
		if id, ok := ss.sessionOf(path, false); ok {
			w.mark(ss, id)
		}
	}
}

func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != "." && !startsDotDot(rel)
}

func startsDotDot(rel string) bool {
	return rel == ".." || len(rel) > 2 && rel[:3] == ".."+string(filepath.Separator)
}

// rescanAll re-lists every store and marks every session; JSON trees get
// their missing watches back.
func (w *Watcher) rescanAll(ctx context.Context) {
	w.scheduleRediscover()
	for _, ss := range w.stores {
		if ss.gone || w.checkIdentity(ss) {
			continue
		}
		if err := w.list(ctx, ss); err != nil {
			w.warn(ss, "cannot list the sessions again", err)
			continue
		}
		for id := range ss.refs {
			w.mark(ss, id)
		}
		switch ss.info.Shape {
		case store.ShapeSQLite:
			w.markDB(ss)
		case store.ShapeExport:
		default:
			if w.fsw != nil {
				w.addTree(ss, ss.root, true)
			}
		}
	}
}

// arm sets the timer to the earliest due time; with nothing pending the
// timer stays stopped and the watcher costs nothing.
func (w *Watcher) arm() {
	if w.armed {
		w.timer.Stop()
		w.armed = false
	}
	var first time.Time
	for _, p := range w.pending {
		if first.IsZero() || p.due.Before(first) {
			first = p.due
		}
	}
	if first.IsZero() {
		return
	}
	d := first.Sub(w.clock.Now())
	if d < 0 {
		d = 0
	}
	w.timer.Reset(d)
	w.armed = true
}

// runDue examines the sessions whose time has come, oldest first, at most
// a batch at a time so file events keep being read.
func (w *Watcher) runDue(ctx context.Context) {
	now := w.clock.Now()
	var due []key
	for k, p := range w.pending {
		if !p.due.After(now) {
			due = append(due, k)
		}
	}
	sort.Slice(due, func(i, j int) bool {
		a, b := w.pending[due[i]], w.pending[due[j]]
		if !a.due.Equal(b.due) {
			return a.due.Before(b.due)
		}
		if due[i].store != due[j].store {
			return due[i].store < due[j].store
		}
		return due[i].id < due[j].id
	})
	if len(due) > batch {
		due = due[:batch]
	}
	for _, k := range due {
		if ctx.Err() != nil {
			return
		}
		p := w.pending[k]
		delete(w.pending, k)
		if k == rediscoverKey {
			w.rediscover(ctx)
			continue
		}
		ss := w.stores[k.store]
		switch {
		case ss.gone:
		case k.id == "":
			w.checkDB(ctx, ss)
		case k.id == contentKey:
			w.checkContent(ctx, ss)
		default:
			w.examine(ctx, ss, k.id, p.lastEvent)
		}
	}
}

// checkDB asks a database which sessions changed. A database replaced
// by another file is not asked: the stores are looked for again.
func (w *Watcher) checkDB(ctx context.Context, ss *storeState) {
	if w.checkIdentity(ss) {
		return
	}
	start := w.clock.Now()
	ids, err := ss.db.since(ctx, false)
	if w.queried != nil {
		w.queried()
	}
	ss.lastQuery = w.clock.Now()
	ss.queryCost = ss.lastQuery.Sub(start)
	if err != nil {
		if ctx.Err() == nil {
			w.warn(ss, "cannot read the database's changes; retrying", err)
			k := key{w.storeIndex(ss), ""}
			w.pending[k] = &pending{due: w.clock.Now().Add(w.retry())}
		}
		return
	}
	for _, id := range ids {
		w.mark(ss, id)
	}
}

// checkContent compares every session's content in a database with the
// last check (changes.digest), once the database has been quiet for the
// settle window: what changed without a newer time_updated (an edit by
// hand or by another tool, a deleted row, a database copied in place over
// the file) is examined now. Sessions whose content is what was last
// examined are skipped there by their fingerprint.
//
// The check reads through a new connection, which then replaces the old
// one: a connection keeps the pages it read while the database's
// write-ahead log says nothing changed, so a file written over in place
// (cp other.db opencode.db) is invisible to it. For the same reason the
// store's reader is opened again when the check finds a change.
func (w *Watcher) checkContent(ctx context.Context, ss *storeState) {
	if w.checkIdentity(ss) {
		return
	}
	ss.lastContent = w.clock.Now()
	ids, err := w.freshDigest(ctx, ss)
	if err != nil {
		if ctx.Err() == nil {
			w.warn(ss, "cannot read the database's content; retrying", err)
			w.pending[key{w.storeIndex(ss), contentKey}] = &pending{due: w.clock.Now().Add(w.retry())}
		}
		return
	}
	if len(ids) == 0 {
		return
	}
	w.reopen(ctx, ss)
	now := w.clock.Now()
	for _, id := range ids {
		if w.selected(id) {
			w.later(ss, id, now, ss.lastDBEvent)
		}
	}
}

// freshDigest runs the content check on a new connection to the database
// and keeps that connection for the store's change queries.
func (w *Watcher) freshDigest(ctx context.Context, ss *storeState) ([]string, error) {
	fresh, err := openChanges(ss.root)
	if err != nil {
		return nil, err
	}
	fresh.mark, fresh.seen, fresh.sums = ss.db.mark, ss.db.seen, ss.db.sums
	ids, err := fresh.digest(ctx, false)
	if err != nil {
		fresh.Close()
		return nil, err
	}
	ss.db.Close()
	ss.db = fresh
	return ids, nil
}

// reopen replaces a store's reader by a new one of the same store
// (Options.Rediscover), keeping everything the watcher knows of it. The
// other stores Rediscover opens are closed: changes among them are
// noticed by their own events.
func (w *Watcher) reopen(ctx context.Context, ss *storeState) {
	if w.opts.Rediscover == nil {
		return
	}
	fresh, _ := w.opts.Rediscover(ctx)
	for _, st := range fresh {
		p, err := filepath.Abs(st.Info().Path)
		if err == nil && filepath.Clean(p) == ss.root && st.Info().Shape == ss.info.Shape {
			ss.st.Close()
			ss.st, ss.info = st, st.Info()
			continue
		}
		st.Close()
	}
}
