package watch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// fakeClock is a Clock tests move by hand.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c      *fakeClock
	ch     chan time.Time
	at     time.Time
	active bool
}

func newFakeClock(start time.Time) *fakeClock { return &fakeClock{now: start} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, ch: make(chan time.Time, 1), at: c.now.Add(d), active: true}
	c.timers = append(c.timers, t)
	return t
}

// Advance moves the clock and fires the timers that are due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for _, t := range c.timers {
		if t.active && !t.at.After(c.now) {
			t.active = false
			select {
			case t.ch <- c.now:
			default:
			}
		}
	}
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.active = false
	return was
}

func (t *fakeTimer) Reset(d time.Duration) {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	t.at, t.active = t.c.now.Add(d), true
}

const repo = "../../testdata/sessions/"

func loadFixture(t *testing.T, name string) *storetest.Fixture {
	t.Helper()
	f, err := storetest.LoadExportFixture(filepath.Join(repo, name, "session.json"))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// harness is a watcher driven by hand: polling mode (no fsnotify), a fake
// clock, and an event log.
type harness struct {
	t      *testing.T
	w      *Watcher
	clock  *fakeClock
	st     store.Store
	path   string
	state  string
	mu     sync.Mutex
	events []Event
	inUse  bool
	syncs  int
	// reported, when set, is signalled after each event (runHarness);
	// synced receives the markers the running loop handled.
	reported chan struct{}
	synced   chan string
}

func (h *harness) record(e Event) {
	h.mu.Lock()
	h.events = append(h.events, e)
	if h.reported != nil {
		select {
		case h.reported <- struct{}{}:
		default:
		}
	}
	h.mu.Unlock()
}

func newHarness(t *testing.T, shape store.Shape, configure func(*Options), fixtures ...*storetest.Fixture) *harness {
	t.Helper()
	dir := t.TempDir()
	h := &harness{t: t, state: t.TempDir()}
	h.path = storetest.Materialize(t, shape, dir, fixtures...)
	h.st = storetest.OpenOne(t, h.path)
	// File times are real; the fake clock starts an hour later so that
	// only the events the test makes decide what is quiet.
	h.clock = newFakeClock(time.Now().Add(time.Hour).Truncate(time.Millisecond))
	opts := Options{
		Stores: []store.Store{h.st},
		Settle: 2 * time.Second,
		Poll:   time.Hour, // the test calls poll itself
		Clock:  h.clock,
		Write:  fix.WriteOptions{Backup: backup.Options{Dir: h.state}},
		Report: h.record,
		Activity: func(store.Info) store.Activity {
			if h.inUse {
				return store.Activity{State: store.ActivityOpen, PID: 42, Command: "opencode"}
			}
			return store.Activity{State: store.ActivityNone}
		},
	}
	if configure != nil {
		configure(&opts)
	}
	h.begin(opts)
	return h
}

// begin creates the harness's watcher with opts and starts it (the
// initial scan), closing it when the test ends.
func (h *harness) begin(opts Options) {
	h.t.Helper()
	w, err := New(opts)
	if err != nil {
		h.t.Fatal(err)
	}
	h.w = w
	if err := w.start(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(w.close)
}

// step advances the clock and runs what is due, as the loop would.
func (h *harness) step(d time.Duration) {
	h.clock.Advance(d)
	for h.anyDue() {
		h.w.runDue(context.Background())
	}
}

func (h *harness) anyDue() bool { return h.w.anyDue(h.clock.Now()) }

func (h *harness) kinds(k Kind) []Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Event
	for _, e := range h.events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

func (h *harness) runs() []backup.RunInfo {
	h.t.Helper()
	runs, err := backup.List(backup.Options{Dir: h.state})
	if err != nil {
		h.t.Fatal(err)
	}
	return runs
}

// findings scans the store from disk, as `sessfix scan` would long after.
func (h *harness) findings(id string) []scan.Finding {
	h.t.Helper()
	s, err := h.st.Load(context.Background(), store.SessionRef{ID: id})
	if err != nil {
		h.t.Fatal(err)
	}
	return scan.CheckSession(s, &scan.Options{Now: func() time.Time { return h.clock.Now().Add(time.Hour) }})
}

func fixable(fs []scan.Finding) []string {
	var out []string
	for _, f := range fs {
		if r := scan.Lookup(f.Code); r != nil && r.Fixable && f.Severity >= scan.Warning && f.Code != "SF302" {
			out = append(out, f.Code)
		}
	}
	return out
}

// hashTree maps every file under dir to its content hash.
func hashTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		s := sha256.Sum256(b)
		out[p] = hex.EncodeToString(s[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestInitialScanRepairsBrokenAndLeavesHealthy(t *testing.T) {
	broken := loadFixture(t, "preflight-blank-text")
	healthy := loadFixture(t, "tool-loop-negative")
	for _, shape := range storetest.Shapes {
		if shape == store.ShapeExport {
			continue
		}
		t.Run(string(shape), func(t *testing.T) {
			h := newHarness(t, shape, nil, broken, healthy)
			before := fixable(h.findings(broken.ID))
			if len(before) == 0 {
				t.Fatal("fixture has nothing to repair")
			}
			h.step(0)
			rep := h.kinds(Repaired)
			if len(rep) != 1 || rep[0].Session != broken.ID {
				t.Fatalf("repaired events %+v, want one for %s", rep, broken.ID)
			}
			if rep[0].Backup == "" || len(rep[0].Rules) == 0 || rep[0].Edits == 0 {
				t.Errorf("repaired event lacks backup, rules or edits: %+v", rep[0])
			}
			if left := fixable(h.findings(broken.ID)); len(left) > 0 {
				t.Errorf("after the repair %v remain (before: %v)", left, before)
			}
			if runs := h.runs(); len(runs) != 1 || runs[0].ID != rep[0].Backup {
				t.Errorf("backup runs %+v, want exactly %s", runs, rep[0].Backup)
			}
		})
	}
}

// TestOwnWritesDoNotLoop marks the repaired session changed again, as the
// events of the repair's own writes do, and checks nothing more happens.
func TestOwnWritesDoNotLoop(t *testing.T) {
	broken := loadFixture(t, "preflight-blank-text")
	h := newHarness(t, store.ShapeSessions, nil, broken)
	h.step(0)
	if n := len(h.kinds(Repaired)); n != 1 {
		t.Fatalf("%d repairs, want 1", n)
	}
	for i := 0; i < 5; i++ {
		h.w.poll(context.Background()) // sees the repair's files
		h.w.mark(h.w.stores[0], broken.ID)
		h.step(3 * time.Second)
	}
	if n := len(h.kinds(Repaired)); n != 1 {
		t.Errorf("%d repairs after the session's own writes came back, want 1", n)
	}
	if n := len(h.runs()); n != 1 {
		t.Errorf("%d backup runs, want 1", n)
	}
	if n := len(h.kinds(Checked)); n != 0 {
		t.Errorf("unchanged content was examined again %d times", n)
	}
}

// copyInto copies one file of a materialised store into the watched one.
func copyInto(t *testing.T, src, dst string, mutate func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		b = mutate(b)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStreamingSessionIsLeftAloneUntilQuiet writes a broken session file by
// file, rewriting one part every 100 ms, and checks the watcher waits for
// the settle window after the last write, and not a moment less.
func TestStreamingSessionIsLeftAloneUntilQuiet(t *testing.T) {
	broken := loadFixture(t, "preflight-blank-text")
	healthy := loadFixture(t, "tool-loop-negative")
	h := newHarness(t, store.ShapeSessions, nil, healthy)
	h.step(0)
	staging := storetest.Materialize(t, store.ShapeSessions, t.TempDir(), broken)
	var files []string
	filepath.WalkDir(filepath.Join(staging, broken.ID), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	sort.Strings(files)
	streamed := ""
	for _, f := range files {
		if strings.Contains(f, "prt_cc3e09a66000Jx7Bi7b4qBCpys") {
			streamed = f
		}
	}
	if streamed == "" {
		t.Fatal("the fixture lost its reasoning part")
	}
	dst := func(p string) string { rel, _ := filepath.Rel(staging, p); return filepath.Join(h.path, rel) }
	for _, f := range files {
		copyInto(t, f, dst(f), nil)
		h.w.poll(context.Background())
		h.step(100 * time.Millisecond)
	}
	// The reasoning part grows every 100 ms for 5 s (50 rewrites).
	for i := 0; i < 50; i++ {
		copyInto(t, streamed, dst(streamed), func(b []byte) []byte {
			return []byte(strings.Replace(string(b), "exponentially.", "exponentially"+strings.Repeat(".", i+2), 1))
		})
		h.w.poll(context.Background())
		h.step(100 * time.Millisecond)
		if n := len(h.kinds(Repaired)); n != 0 {
			t.Fatalf("repaired while streaming, after %d rewrites", i+1)
		}
	}
	copyInto(t, streamed, dst(streamed), nil) // the final body
	h.w.poll(context.Background())
	h.step(2*time.Second - time.Millisecond)
	if n := len(h.kinds(Repaired)); n != 0 {
		t.Fatalf("repaired %d times before the settle window passed", n)
	}
	h.step(time.Millisecond)
	rep := h.kinds(Repaired)
	if len(rep) != 1 || rep[0].Session != broken.ID {
		t.Fatalf("repaired %+v, want the streamed session once the settle window passed", rep)
	}
	if left := fixable(h.findings(broken.ID)); len(left) > 0 {
		t.Errorf("after the repair %v remain", left)
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	broken := loadFixture(t, "preflight-blank-text")
	h := newHarness(t, store.ShapeStorage, func(o *Options) { o.DryRun = true }, broken)
	before := hashTree(t, h.path)
	h.step(0)
	h.step(time.Minute)
	would := h.kinds(WouldRepair)
	if len(would) != 1 || len(would[0].Rules) == 0 || would[0].Backup != "" {
		t.Fatalf("would-repair events %+v", would)
	}
	if n := len(h.kinds(Repaired)); n != 0 {
		t.Errorf("%d repairs in a dry run", n)
	}
	after := hashTree(t, h.path)
	if len(before) != len(after) {
		t.Fatalf("dry run changed the file set: %d → %d files", len(before), len(after))
	}
	for p, hash := range before {
		if after[p] != hash {
			t.Errorf("dry run changed %s", p)
		}
	}
	if n := len(h.runs()); n != 0 {
		t.Errorf("dry run made %d backup runs", n)
	}
}

// TestBusyOnlyForUnfinishedMessages: a store held open does not delay a
// session whose messages are all finished.
func TestBusyOnlyForUnfinishedMessages(t *testing.T) {
	f := loadFixture(t, "preflight-reasoning-after-tool")
	h := newHarness(t, store.ShapeSessions, nil, f)
	h.inUse = true
	s, err := h.st.Load(context.Background(), store.SessionRef{ID: f.ID})
	if err != nil {
		t.Fatal(err)
	}
	if opencode.OpenMessage(s) != nil {
		t.Fatal("fixture has an unfinished message; pick another")
	}
	h.step(0)
	if n := len(h.kinds(SkippedBusy)); n != 0 {
		t.Errorf("finished session reported busy")
	}
	if n := len(h.kinds(Repaired)); n != 1 {
		t.Errorf("%d repairs, want 1", n)
	}
}

func TestLockedStoreIsRetried(t *testing.T) {
	broken := loadFixture(t, "preflight-blank-text")
	h := newHarness(t, store.ShapeSessions, nil, broken)
	lock, err := store.AcquireLock(h.st.Info())
	if err != nil {
		t.Fatal(err)
	}
	h.step(0)
	if n := len(h.kinds(Waiting)); n != 1 {
		t.Fatalf("%d waiting events while the lock is held, want 1", n)
	}
	h.step(DefaultLockRetry)
	if n := len(h.kinds(Repaired)); n != 0 {
		t.Fatal("repaired while another sessfix holds the lock")
	}
	if err := lock.Release(); err != nil {
		t.Fatal(err)
	}
	h.step(DefaultLockRetry)
	if n := len(h.kinds(Repaired)); n != 1 {
		t.Fatalf("%d repairs once the lock was released, want 1", n)
	}
}

// TestChangedWhileWritingIsRetried: when a record changes between the scan
// and the write, nothing is written and the session is examined again.
func TestChangedWhileWritingIsRetried(t *testing.T) {
	broken := loadFixture(t, "preflight-blank-text")
	var h *harness
	calls := 0
	h = newHarness(t, store.ShapeSessions, func(o *Options) {
		o.Write.Apply = func(ctx context.Context, info store.Info, sets []*store.ChangeSet) (string, error) {
			calls++
			if calls == 1 {
				return "", store.ErrChanged
			}
			return backup.Apply(ctx, backup.Options{Dir: h.state}, info, sets)
		}
	}, broken)
	h.step(0)
	if len(h.kinds(Waiting)) != 1 || len(h.kinds(Repaired)) != 0 {
		t.Fatalf("first attempt: waiting %d, repaired %d", len(h.kinds(Waiting)), len(h.kinds(Repaired)))
	}
	h.step(2 * time.Second)
	if n := len(h.kinds(Repaired)); n != 1 || calls != 2 {
		t.Fatalf("second attempt: %d repairs after %d calls", n, calls)
	}
}

func TestOverflowRescansEverySession(t *testing.T) {
	a, b := loadFixture(t, "tool-loop-negative"), loadFixture(t, "sf103-negative")
	h := newHarness(t, store.ShapeSessions, func(o *Options) { o.Poll = 0 }, a, b)
	h.step(0)
	if len(h.w.pending) != 0 {
		t.Fatalf("%d sessions pending after the initial scan", len(h.w.pending))
	}
	h.w.watchError(context.Background(), fsnotify.ErrEventOverflow)
	if len(h.kinds(Rescan)) != 1 {
		t.Errorf("no rescan event")
	}
	var ids []string
	for k := range h.w.pending {
		ids = append(ids, k.id)
	}
	sort.Strings(ids)
	want := []string{a.ID, b.ID}
	sort.Strings(want)
	if strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Errorf("pending after overflow %v, want %v", ids, want)
	}
}

func TestSessionOfMapsEveryShape(t *testing.T) {
	root := filepath.FromSlash("/data/store")
	cases := []struct {
		shape store.Shape
		path  string
		dir   bool
		want  string
	}{
		{store.ShapeSessions, "ses_a/messages/msg_1.json", false, "ses_a"},
		{store.ShapeSessions, "ses_a/parts/msg_1/prt_1.json", false, "ses_a"},
		{store.ShapeSessions, "ses_a/parts/msg_1", true, "ses_a"},
		{store.ShapeSessions, "ses_a/parts/msg_1/.sessfix-123.tmp", false, ""},
		{store.ShapeSessions, ".sessfix.lock", false, ""},
		{store.ShapeStorage, "session/proj/ses_b.json", false, "ses_b"},
		{store.ShapeStorage, "message/ses_b/msg_2.json", false, "ses_b"},
		{store.ShapeStorage, "part/msg_2/prt_9.json", false, "ses_b"}, // learned from the message above
		{store.ShapeStorage, "part/msg_unknown/prt_9.json", false, ""},
		{store.ShapeStorage, "session_diff/ses_b.json", false, ""},
		{store.ShapeProject, "session/info/ses_c.json", false, "ses_c"},
		{store.ShapeProject, "session/message/ses_c/msg_3.json", false, "ses_c"},
		{store.ShapeProject, "session/part/ses_c/msg_3/prt_1.json", false, "ses_c"},
		{store.ShapeProject, "session/info", true, ""},
	}
	states := map[store.Shape]*storeState{}
	for _, c := range cases {
		ss := states[c.shape]
		if ss == nil {
			ss = &storeState{info: store.Info{Shape: c.shape}, root: root, msgSession: map[string]string{}}
			states[c.shape] = ss
		}
		got, ok := ss.sessionOf(filepath.Join(root, filepath.FromSlash(c.path)), c.dir)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%s %s: got %q %v, want %q", c.shape, c.path, got, ok, c.want)
		}
	}
}

func TestFingerprintIgnoresTimesNotBytes(t *testing.T) {
	f := loadFixture(t, "tool-loop-negative")
	st := storetest.OpenOne(t, storetest.Materialize(t, store.ShapeSessions, t.TempDir(), f))
	s, err := st.Load(context.Background(), store.SessionRef{ID: f.ID})
	if err != nil {
		t.Fatal(err)
	}
	fp := Fingerprint(s)
	s.Messages[0].Modified = s.Messages[0].Modified.Add(time.Hour)
	if Fingerprint(s) != fp {
		t.Error("a new modification time changed the fingerprint")
	}
	p := s.Messages[len(s.Messages)-1].Parts[0]
	p.Raw = append(append([]byte(nil), p.Raw...), ' ')
	if Fingerprint(s) == fp {
		t.Error("a changed record body kept the fingerprint")
	}
}

// TestBusySessionRepairedOnceTheWriterIsGone: a killed OpenCode writes
// nothing more, so the busy session is looked at again without an event.
func TestBusySessionRepairedOnceTheWriterIsGone(t *testing.T) {
	broken := loadFixture(t, "sf105-abandoned-tool")
	h := newHarness(t, store.ShapeSessions, nil, broken)
	h.inUse = true
	h.w.mark(h.w.stores[0], broken.ID)
	h.step(2 * time.Second)
	if len(h.kinds(Waiting)) != 1 {
		t.Fatal("not left alone as in progress")
	}
	h.step(DefaultBusyRecheck)
	if n := len(h.kinds(Repaired)); n != 0 {
		t.Fatal("repaired while the store is still open elsewhere")
	}
	h.inUse = false // the writer was killed
	h.step(DefaultBusyRecheck)
	if n := len(h.kinds(Repaired)); n != 1 {
		t.Fatalf("%d repairs once the writer was gone, want 1", n)
	}
}

// TestRunFollowsNewDirectories runs the real loop with fsnotify on a
// storage/ tree: a session whose session, message and part directories
// are all created after the start is found through the events and
// repaired once the (fake) settle window has passed.
func TestRunFollowsNewDirectories(t *testing.T) {
	healthy, broken := loadFixture(t, "tool-loop-negative"), loadFixture(t, "preflight-blank-text")
	h := runHarness(t, store.ShapeStorage, healthy)
	staging := storetest.Materialize(t, store.ShapeStorage, t.TempDir(), broken)
	if err := os.CopyFS(h.path, os.DirFS(staging)); err != nil {
		t.Fatal(err)
	}
	h.waitRepaired(broken.ID)
}

// TestRunFollowsRenameReplace breaks a part the way an editor saves it:
// a temp file renamed over the original.
func TestRunFollowsRenameReplace(t *testing.T) {
	healthy := loadFixture(t, "tool-loop-negative")
	h := runHarness(t, store.ShapeSessions, healthy)
	var target string
	filepath.WalkDir(h.path, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(p, "parts") && target == "" {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), `"type": "text"`) {
				target = p
			}
		}
		return err
	})
	if target == "" {
		t.Fatal("no text part in the fixture")
	}
	b, _ := os.ReadFile(target)
	broken := regexp.MustCompile(`"text": "[^"]*"`).ReplaceAll(b, []byte(`"text": "   "`))
	tmp := filepath.Join(filepath.Dir(target), ".edit.json.swp")
	if err := os.WriteFile(tmp, broken, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, target); err != nil {
		t.Fatal(err)
	}
	h.waitRepaired(healthy.ID)
}

// runHarness starts the real loop (fsnotify, fake clock) on a store and
// waits until the initial scan is done.
func runHarness(t *testing.T, shape store.Shape, fixtures ...*storetest.Fixture) *harness {
	t.Helper()
	h := newHarness(t, shape, func(o *Options) { o.Poll = 0 }, fixtures...)
	h.w.fsw.Close() // the harness started it by hand; Run starts it again (on the same stores)
	w, err := New(h.w.opts)
	if err != nil {
		t.Fatal(err)
	}
	h.w = w
	h.reported, h.synced = make(chan struct{}, 1), make(chan string, 64)
	w.handled = func(ev fsnotify.Event) {
		if strings.HasPrefix(filepath.Base(ev.Name), ".sync-") && ev.Has(fsnotify.Create) {
			h.synced <- filepath.Clean(ev.Name)
		}
	}
	before := len(h.kinds(Started))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	h.await("the start", func() bool { return len(h.kinds(Started)) > before })
	h.clock.Advance(0) // fire the timer the start armed for the initial scan
	// The initial scan checks every (healthy) session.
	h.await("the initial scan", func() bool { return len(h.kinds(Checked)) >= len(fixtures) })
	return h
}

// await waits until done holds, looking again after each event the
// running loop reports. The guard only turns a watcher that never
// reports into a failure; it decides nothing.
func (h *harness) await(what string, done func() bool) {
	h.t.Helper()
	guard := time.NewTimer(30 * time.Second)
	defer guard.Stop()
	for !done() {
		select {
		case <-h.reported:
		case <-guard.C:
			h.mu.Lock()
			defer h.mu.Unlock()
			h.t.Fatalf("%s never came; events %+v", what, h.events)
		}
	}
}

// syncRun is sync for the running loop: it creates a hidden file in the
// store's root and waits until the loop handled its event, and so every
// file event before it, and scheduled what they made due.
func (h *harness) syncRun() {
	h.t.Helper()
	h.syncs++
	mark := filepath.Join(h.path, ".sync-"+strconv.Itoa(h.syncs))
	if err := os.WriteFile(mark, nil, 0o644); err != nil {
		h.t.Fatal(err)
	}
	guard := time.NewTimer(30 * time.Second) // a failure guard, not a synchronisation
	defer guard.Stop()
	for {
		select {
		case got := <-h.synced:
			if got == mark {
				return
			}
		case <-guard.C:
			h.t.Fatalf("the loop never handled %s", mark)
		}
	}
}

// waitRepaired hands the loop the file events so far, moves the fake time
// past the settle window, and checks that the session, and only it, was
// repaired.
func (h *harness) waitRepaired(id string) {
	h.t.Helper()
	h.syncRun()
	h.clock.Advance(h.w.settlePolicy.Window())
	h.await(id+"'s repair", func() bool { return len(h.kinds(Repaired)) > 0 })
	if rep := h.kinds(Repaired); len(rep) != 1 || rep[0].Session != id {
		h.t.Errorf("repaired %+v, want only %s", rep, id)
	}
}

// TestSuppressedFindingsAreNotRepaired: what the user suppressed (the config
// file's suppressions) is left alone, and the rest is still repaired.
func TestSuppressedFindingsAreNotRepaired(t *testing.T) {
	broken := loadFixture(t, "preflight-blank-text")
	var suppressed []string
	h := newHarness(t, store.ShapeStorage, func(o *Options) {
		o.Suppressed = func(f scan.Finding) bool {
			if f.Code == "SF301" {
				suppressed = append(suppressed, f.Code)
				return true
			}
			return false
		}
	}, broken)
	h.step(0)
	h.step(time.Minute)
	rep := h.kinds(Repaired)
	if len(rep) != 1 {
		t.Fatalf("repaired events %+v", rep)
	}
	if len(suppressed) == 0 {
		t.Fatal("the fixture should have an SF301 finding to suppress")
	}
	for _, r := range rep[0].Rules {
		if r == "SF301" {
			t.Errorf("a suppressed SF301 was repaired: %v", rep[0].Rules)
		}
	}
}
