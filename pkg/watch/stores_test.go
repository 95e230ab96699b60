package watch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// rediscoverIn opens the stores of a data dir as `sessfix watch DIR` does,
// and makes DIR the watcher's place.
func rediscoverIn(dir string) func(*Options) {
	return func(o *Options) {
		o.Poll = 0
		o.Places = []string{dir}
		o.Rediscover = func(context.Context) ([]store.Store, error) {
			d, err := shapes.Open([]string{dir})
			if err != nil {
				return nil, err
			}
			return d.Stores, nil
		}
	}
}

// sync hands the watcher every file event up to now, in order: it creates
// a hidden file in dir (a directory the watcher watches) and reads the
// real fsnotify events, handling each, until that file's own event
// arrives. inotify queues the events of one watcher in order, so nothing
// that happened before is left behind.
func (h *harness) sync(dir string) {
	h.t.Helper()
	h.syncs++
	mark := filepath.Join(dir, ".sync-"+strconv.Itoa(h.syncs))
	f, err := os.Create(mark)
	if err != nil {
		h.t.Fatal(err)
	}
	f.Close()
	guard := time.NewTimer(30 * time.Second) // a failure guard, not a synchronisation
	defer guard.Stop()
	for {
		select {
		case ev := <-h.w.fsw.Events:
			h.w.handle(context.Background(), ev)
			if filepath.Clean(ev.Name) == mark {
				return
			}
		case err := <-h.w.fsw.Errors:
			h.w.watchError(context.Background(), err)
		case <-guard.C:
			h.t.Fatalf("the watcher never saw %s: %s is not watched", mark, dir)
		}
	}
}

func (h *harness) warnings(substr string) []Event {
	var out []Event
	for _, e := range h.kinds(Warning) {
		if strings.Contains(e.Message, substr) {
			out = append(out, e)
		}
	}
	return out
}

// heldDeleted lists the files this process holds open that were deleted
// (Linux: /proc/self/fd links ending in " (deleted)") under dir.
func heldDeleted(t *testing.T, dir string) []string {
	t.Helper()
	if runtime.GOOS != "linux" {
		return nil // nothing to look at elsewhere; the repair assertions still hold
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, fd := range fds {
		l, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(l, dir) && strings.HasSuffix(l, " (deleted)") {
			out = append(out, l)
		}
	}
	return out
}

// TestReplacedDatabaseIsReopened: `mv other.db opencode.db` while watch
// runs. The new database's broken session is repaired (in the new file),
// the user is told the store was replaced, and the deleted file is not
// held open.
func TestReplacedDatabaseIsReopened(t *testing.T) {
	healthy, broken := loadFixture(t, "tool-loop-negative"), loadFixture(t, "preflight-blank-text")
	var dir string
	h := newHarness(t, store.ShapeSQLite, func(o *Options) {
		dir = filepath.Dir(o.Stores[0].Info().Path)
		rediscoverIn(dir)(o)
	}, healthy)
	h.step(0)
	other := storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), healthy, broken)
	if err := os.Rename(other, h.path); err != nil {
		t.Fatal(err)
	}
	h.sync(dir)
	h.step(DefaultCoalesce)
	if n := len(h.kinds(Repaired)); n != 0 {
		t.Fatalf("repaired before the settle window passed after the replacement")
	}
	h.step(2 * time.Second)
	rep := h.kinds(Repaired)
	if len(rep) != 1 || rep[0].Session != broken.ID {
		t.Fatalf("repaired %+v, want the broken session of the new database", rep)
	}
	if n := len(h.warnings("replaced")); n != 1 {
		t.Errorf("%d warnings that the store was replaced, want 1", n)
	}
	if left := fixable(sessionFindings(t, h.path, broken.ID, h.clock.Now())); len(left) > 0 {
		t.Errorf("the new database still has %v", left)
	}
	if held := heldDeleted(t, dir); len(held) > 0 {
		t.Errorf("the replaced database is still open: %v", held)
	}
	// A second change to the new database is followed too.
	h.step(time.Minute)
	storetest.ExecSQL(t, h.path, blankFirstText(healthy.ID, true))
	h.sync(dir)
	h.step(DefaultCoalesce)
	h.step(2 * time.Second)
	if rep := h.kinds(Repaired); len(rep) != 2 || rep[1].Session != healthy.ID {
		t.Fatalf("repaired %+v, want the session broken in the new database afterwards", rep)
	}
}

// TestReplacedDatabaseIsReopenedWhenPolling: the same with --poll, where
// no event names the file: the poll sees another file at the path.
func TestReplacedDatabaseIsReopenedWhenPolling(t *testing.T) {
	healthy, broken := loadFixture(t, "tool-loop-negative"), loadFixture(t, "preflight-blank-text")
	h := newHarness(t, store.ShapeSQLite, func(o *Options) {
		dir := filepath.Dir(o.Stores[0].Info().Path)
		rediscoverIn(dir)(o)
		o.Poll = time.Hour // the test polls by hand
	}, healthy)
	h.step(0)
	other := storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), broken)
	if err := os.Rename(other, h.path); err != nil {
		t.Fatal(err)
	}
	h.w.poll(context.Background())
	h.step(DefaultCoalesce)
	h.step(2 * time.Second) // the store changed now: its sessions settle first
	if rep := h.kinds(Repaired); len(rep) != 1 || rep[0].Session != broken.ID {
		t.Fatalf("repaired %+v, want the broken session of the new database", rep)
	}
}

// TestSwappedStorageDirIsFollowed: a JSON store's storage/ directory is
// moved away and another put in its place.
func TestSwappedStorageDirIsFollowed(t *testing.T) {
	healthy, broken := loadFixture(t, "tool-loop-negative"), loadFixture(t, "preflight-blank-text")
	var dir string
	h := newHarness(t, store.ShapeStorage, func(o *Options) {
		dir = filepath.Dir(o.Stores[0].Info().Path)
		rediscoverIn(dir)(o)
	}, healthy)
	h.step(0)
	other := storetest.Materialize(t, store.ShapeStorage, t.TempDir(), healthy, broken)
	if err := os.Rename(h.path, h.path+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, h.path); err != nil {
		t.Fatal(err)
	}
	h.sync(dir)
	h.step(DefaultCoalesce)
	h.step(2 * time.Second) // the store changed now: its sessions settle first
	if rep := h.kinds(Repaired); len(rep) != 1 || rep[0].Session != broken.ID {
		t.Fatalf("repaired %+v, want the broken session of the new storage/", rep)
	}
	if n := len(h.warnings("replaced")); n != 1 {
		t.Errorf("%d warnings that the store was replaced, want 1", n)
	}
	// The new tree is watched: a session written into it later is seen.
	late := loadFixture(t, "sf105-pending-after-abort")
	staging := storetest.Materialize(t, store.ShapeStorage, t.TempDir(), late)
	if err := os.CopyFS(h.path, os.DirFS(staging)); err != nil {
		t.Fatal(err)
	}
	h.sync(dir)
	h.step(time.Minute)
	if rep := h.kinds(Repaired); len(rep) != 2 || rep[1].Session != late.ID {
		t.Fatalf("repaired %+v, want %s written into the new tree", rep, late.ID)
	}
}

// TestStoreAppearsAfterStart: watch starts on a data dir that does not
// exist yet, says once that it waits, and repairs the database OpenCode's
// first run creates there.
func TestStoreAppearsAfterStart(t *testing.T) {
	broken := loadFixture(t, "preflight-blank-text")
	parent := t.TempDir()
	dir := filepath.Join(parent, "opencode")
	h := emptyHarness(t, dir, nil)
	h.step(0)
	if n := len(h.warnings("no store found yet")); n != 1 {
		t.Fatalf("%d warnings that no store exists yet, want 1", n)
	}
	// The data dir appears, then something that is no store: still
	// waiting, and not said again.
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "auth.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	h.sync(parent)
	h.step(DefaultCoalesce)
	h.sync(dir) // the data dir is watched now
	h.step(DefaultCoalesce)
	if n := len(h.warnings("no store found yet")); n != 1 {
		t.Errorf("%d warnings that no store exists yet, want 1", n)
	}
	// OpenCode's first run: the database appears.
	other := storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), broken)
	if err := os.Rename(other, h.path); err != nil {
		t.Fatal(err)
	}
	h.sync(dir)
	h.step(DefaultCoalesce)
	h.step(2 * time.Second) // the store changed now: its sessions settle first
	if found := h.kinds(StoreFound); len(found) != 1 || found[0].Store == nil || found[0].Store.Path != h.path {
		t.Fatalf("store-found events %+v, want one for %s", found, h.path)
	}
	if rep := h.kinds(Repaired); len(rep) != 1 || rep[0].Session != broken.ID {
		t.Fatalf("repaired %+v, want the session of the new database", rep)
	}
}

// emptyHarness starts a watcher (fsnotify, fake clock) on a data dir with
// no store yet, as `sessfix watch DIR` does.
func emptyHarness(t *testing.T, dir string, configure func(*Options)) *harness {
	t.Helper()
	h := &harness{t: t, state: t.TempDir(), path: filepath.Join(dir, "opencode.db")}
	h.clock = newFakeClock(time.Now().Add(time.Hour).Truncate(time.Millisecond))
	opts := Options{Settle: 2 * time.Second, Clock: h.clock, Report: h.record,
		Activity: func(store.Info) store.Activity { return store.Activity{State: store.ActivityNone} }}
	opts.Write.Backup.Dir = h.state
	rediscoverIn(dir)(&opts)
	if configure != nil {
		configure(&opts)
	}
	h.begin(opts)
	return h
}

// TestFailedLookIsTriedAgain: a database caught in the middle of being
// copied cannot be opened; the look for stores is said to have failed
// once and tried again after the settle window, which finds it.
func TestFailedLookIsTriedAgain(t *testing.T) {
	broken := loadFixture(t, "preflight-blank-text")
	dir := t.TempDir()
	fail := false
	h := emptyHarness(t, dir, func(o *Options) {
		open := o.Rediscover
		o.Rediscover = func(ctx context.Context) ([]store.Store, error) {
			if fail {
				fail = false
				return nil, errors.New("file is not a database")
			}
			return open(ctx)
		}
	})
	h.step(0)
	fail = true
	other := storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), broken)
	if err := os.Rename(other, h.path); err != nil {
		t.Fatal(err)
	}
	h.sync(dir)
	h.step(DefaultCoalesce)
	if n := len(h.warnings("cannot look for the stores again")); n != 1 || len(h.kinds(StoreFound)) != 0 {
		t.Fatalf("%d warnings of a failed look, %d stores found; want 1 and none", n, len(h.kinds(StoreFound)))
	}
	h.step(2 * time.Second)
	h.step(2 * time.Second) // the store changed now: its sessions settle first
	if rep := h.kinds(Repaired); len(h.kinds(StoreFound)) != 1 || len(rep) != 1 || rep[0].Session != broken.ID {
		t.Fatalf("after the retry: %d stores found, repaired %+v", len(h.kinds(StoreFound)), rep)
	}
}

// TestDatabaseCopiedIntoTheDataDir: `cp backup.db DIR/opencode.db`
// creates the file empty, then writes it; the look for stores made when
// it was created finds no store, the writes that follow make another.
func TestDatabaseCopiedIntoTheDataDir(t *testing.T) {
	broken := loadFixture(t, "preflight-blank-text")
	dir := t.TempDir()
	h := emptyHarness(t, dir, nil)
	h.step(0)
	f, err := os.Create(h.path)
	if err != nil {
		t.Fatal(err)
	}
	h.sync(dir)
	h.step(DefaultCoalesce)
	if n := len(h.kinds(StoreFound)); n != 0 {
		t.Fatalf("an empty file was taken for a store")
	}
	b, err := os.ReadFile(storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), broken))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	h.sync(dir)
	h.step(2 * time.Second) // a write makes a look after the settle window
	h.step(2 * time.Second) // the store changed now: its sessions settle first
	if rep := h.kinds(Repaired); len(h.kinds(StoreFound)) != 1 || len(rep) != 1 || rep[0].Session != broken.ID {
		t.Fatalf("%d stores found, repaired %+v; want the copied database and its broken session", len(h.kinds(StoreFound)), rep)
	}
}

// TestMigrationSwitchesToTheDatabase: a 1.1 data dir (storage/) gets its
// opencode.db (the 1.2 migration): the database is followed, storage/ is
// a stale copy from then on and is dropped, with a warning.
func TestMigrationSwitchesToTheDatabase(t *testing.T) {
	healthy, broken := loadFixture(t, "tool-loop-negative"), loadFixture(t, "preflight-blank-text")
	var dir string
	h := newHarness(t, store.ShapeStorage, func(o *Options) {
		dir = filepath.Dir(o.Stores[0].Info().Path)
		rediscoverIn(dir)(o)
	}, healthy)
	h.step(0)
	db := storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), healthy, broken)
	if err := os.Rename(db, filepath.Join(dir, "opencode.db")); err != nil {
		t.Fatal(err)
	}
	h.sync(dir)
	h.step(DefaultCoalesce)
	h.step(2 * time.Second) // the store changed now: its sessions settle first
	rep := h.kinds(Repaired)
	if len(rep) != 1 || rep[0].Session != broken.ID || rep[0].Store.Shape != store.ShapeSQLite {
		t.Fatalf("repaired %+v, want %s in the new database", rep, broken.ID)
	}
	if n := len(h.warnings("is gone")); n != 1 {
		t.Errorf("%d warnings that storage/ is no longer followed, want 1", n)
	}
}

// blankFirstText is an UPDATE that blanks a session's first text part,
// keeping time_updated as it is when keep is set, else setting it to now,
// as OpenCode does.
func blankFirstText(sid string, keep bool) string {
	set := "data = json_set(data, '$.text', '   ')"
	if !keep {
		set += ", time_updated = CAST(unixepoch('subsec') * 1000 AS INTEGER)"
	}
	return "UPDATE part SET " + set + " WHERE id = (SELECT id FROM part WHERE session_id = '" + sid +
		"' AND json_extract(data, '$.type') = 'text' ORDER BY id LIMIT 1)"
}

// sessionFindings scans a session of the store at path, read afresh, as
// `sessfix scan` would long after.
func sessionFindings(t *testing.T, path, id string, now time.Time) []scan.Finding {
	t.Helper()
	st := storetest.OpenOne(t, path)
	defer st.Close()
	s := storetest.Load(t, st, id)
	return scan.CheckSession(s, &scan.Options{Now: func() time.Time { return now.Add(time.Hour) }})
}

// TestEditKeepingTimeUpdatedIsNoticed: a row edited without a newer
// time_updated (by hand, by another tool) is seen once the database has
// been quiet for the settle window, and at most once every contentEvery.
func TestEditKeepingTimeUpdatedIsNoticed(t *testing.T) {
	a, b := loadFixture(t, "tool-loop-negative"), loadFixture(t, "sf103-negative")
	var dir string
	h := newHarness(t, store.ShapeSQLite, func(o *Options) {
		dir = filepath.Dir(o.Stores[0].Info().Path)
		o.Poll = 0
	}, a, b)
	h.step(contentEvery) // the check made at the start is long past
	storetest.ExecSQL(t, h.path, blankFirstText(a.ID, true))
	h.sync(dir)
	h.step(DefaultCoalesce)
	if n := len(h.kinds(Repaired)); n != 0 {
		t.Fatalf("repaired before the database was quiet for the settle window")
	}
	h.step(2 * time.Second)
	if rep := h.kinds(Repaired); len(rep) != 1 || rep[0].Session != a.ID {
		t.Fatalf("repaired %+v, want the session edited without a newer time_updated", rep)
	}
	// A second such edit right after: the next check waits for
	// contentEvery after the last one.
	storetest.ExecSQL(t, h.path, blankFirstText(b.ID, true))
	h.sync(dir)
	h.step(2 * time.Second)
	if n := len(h.kinds(Repaired)); n != 1 {
		t.Fatalf("the database's content was read again %s after the last check", 2*time.Second)
	}
	h.step(contentEvery)
	if rep := h.kinds(Repaired); len(rep) != 2 || rep[1].Session != b.ID {
		t.Fatalf("repaired %+v, want the second session edited without a newer time_updated", rep)
	}
}

// TestCopyInPlaceIsNoticed: `cp other.db opencode.db` writes over the
// file (same inode); the copy's sessions carry no newer time_updated.
func TestCopyInPlaceIsNoticed(t *testing.T) {
	healthy := loadFixture(t, "tool-loop-negative")
	var dir string
	h := newHarness(t, store.ShapeSQLite, func(o *Options) {
		dir = filepath.Dir(o.Stores[0].Info().Path)
		rediscoverIn(dir)(o)
	}, healthy)
	h.step(contentEvery)
	other := storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), healthy)
	storetest.ExecSQL(t, other, blankFirstText(healthy.ID, true))
	b, err := os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(other + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the copy has a write-ahead log (%v): copying the file alone would lose it", err)
	}
	// In place, as cp does: the file keeps its inode.
	if err := os.WriteFile(h.path, b, 0); err != nil {
		t.Fatal(err)
	}
	h.sync(dir)
	h.step(DefaultCoalesce)
	h.step(2 * time.Second)
	if rep := h.kinds(Repaired); len(rep) != 1 || rep[0].Session != healthy.ID {
		t.Fatalf("repaired %+v, want the session the copy broke", rep)
	}
	if n := len(h.warnings("replaced")); n != 0 {
		t.Errorf("a copy in place was reported as a replaced store")
	}
}

// TestPlaceEvents: which file events make the watcher look for stores
// again, and how soon.
func TestPlaceEvents(t *testing.T) {
	dir := filepath.FromSlash("/data/opencode")
	db := filepath.Join(dir, "opencode.db")
	w := &Watcher{places: []string{dir}, opts: Options{Coalesce: DefaultCoalesce, Rediscover: func(context.Context) ([]store.Store, error) { return nil, nil }}}
	w.settlePolicy.Settle = 5 * time.Second
	cases := []struct {
		followed bool
		path     string
		op       fsnotify.Op
		want     time.Duration // 0: no look
	}{
		{false, db, fsnotify.Create, DefaultCoalesce},                           // OpenCode's first run
		{false, db, fsnotify.Write, 5 * time.Second},                            // being copied in
		{false, db + "-wal", fsnotify.Write, 5 * time.Second},                   // created, filled through its log
		{true, db, fsnotify.Write, 0},                                           // the store followed: its own events
		{true, db + "-wal", fsnotify.Create, 0},                                 // every OpenCode start
		{true, db + "-shm", fsnotify.Remove, 0},                                 // every OpenCode stop
		{true, db, fsnotify.Create, DefaultCoalesce},                            // mv other.db opencode.db
		{true, filepath.Join(dir, "storage"), fsnotify.Rename, DefaultCoalesce}, // storage/ swapped
		{true, filepath.Join(dir, ".sessfix.lock"), fsnotify.Create, 0},
		{true, filepath.Join(dir, "log", "x.log"), fsnotify.Create, 0}, // deeper: no entry of the place
		{true, dir, fsnotify.Create, DefaultCoalesce},                  // the data dir appears
		{true, filepath.Dir(dir), fsnotify.Create, DefaultCoalesce},    // or a parent of it
		{true, filepath.Join(filepath.Dir(dir), "other"), fsnotify.Create, 0},
		{true, db, fsnotify.Chmod, 0},
	}
	for _, c := range cases {
		w.stores = nil
		if c.followed {
			w.stores = []*storeState{{root: db}}
		}
		d, ok := w.placeEvent(fsnotify.Event{Name: c.path, Op: c.op}, c.path)
		if !ok {
			d = 0
		}
		if d != c.want {
			t.Errorf("%s %s (followed %v): look after %s, want %s", c.op, c.path, c.followed, d, c.want)
		}
	}
}

// TestExportFileSavedByRename: an editor saves an export file by renaming
// a new file over it. That is how the file changes, not news: no
// warning, and the edit is repaired once it has settled.
func TestExportFileSavedByRename(t *testing.T) {
	healthy := loadFixture(t, "tool-loop-negative")
	var dir string
	h := newHarness(t, store.ShapeExport, func(o *Options) {
		dir = filepath.Dir(o.Stores[0].Info().Path)
		rediscoverIn(o.Stores[0].Info().Path)(o)
	}, healthy)
	h.step(0)
	b, err := os.ReadFile(h.path)
	if err != nil {
		t.Fatal(err)
	}
	edited := regexp.MustCompile(`"text": "[^"]+"`).ReplaceAll(b, []byte(`"text": "   "`))
	tmp := filepath.Join(dir, ".save.tmp")
	if err := os.WriteFile(tmp, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, h.path); err != nil {
		t.Fatal(err)
	}
	h.sync(dir)
	h.step(DefaultCoalesce)
	h.step(2 * time.Second)
	if rep := h.kinds(Repaired); len(rep) != 1 || rep[0].Session != healthy.ID {
		t.Fatalf("repaired %+v, want the edited session", rep)
	}
	if w := h.kinds(Warning); len(w) != 0 {
		t.Errorf("warnings for an editor's save: %+v", w)
	}
}
