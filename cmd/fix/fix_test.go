package fix

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	"github.com/sessfix/sessfix/cmd/internal/plandoc"
	"github.com/sessfix/sessfix/internal/opencodetest/golden"
	"github.com/sessfix/sessfix/internal/opencodetest/storegen"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

const fixtures = "../../testdata/sessions"

// The fixtures' sessions were recorded in 2026; a day after that they are
// all quiet long enough to fix.
var clock = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// materialize writes fixture cases into one store of the shape.
func materialize(t *testing.T, shape store.Shape, cases ...string) string {
	t.Helper()
	return storetest.MaterializeCases(t, shape, fixtures, clock.Add(-24*time.Hour), cases...)
}

// testApplier writes with the store's own writer and keeps the images it
// read first, so the test can undo like a backup run would.
type testApplier struct {
	images map[string][]store.Image
	n      int
}

func (a *testApplier) apply(ctx context.Context, info store.Info, sets []*store.ChangeSet) (string, error) {
	w, err := shapes.OpenWriter(info, store.WriteOptions{Now: func() time.Time { return clock }})
	if err != nil {
		return "", err
	}
	defer w.Close()
	a.n++
	run := fmt.Sprintf("run-%d", a.n)
	for _, cs := range sets {
		targets, err := w.Targets(ctx, cs)
		if err != nil {
			return "", err
		}
		imgs, err := w.Read(ctx, targets)
		if err != nil {
			return "", err
		}
		a.images[run] = append(a.images[run], imgs...)
		if err := w.Apply(ctx, cs); err != nil {
			return "", err
		}
	}
	return run, nil
}

func (a *testApplier) undo(t *testing.T, info store.Info, run string) {
	t.Helper()
	w, err := shapes.OpenWriter(info, store.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	imgs := a.images[run]
	// Restore in reverse so the oldest image of a target wins.
	for i, j := 0, len(imgs)-1; i < j; i, j = i+1, j-1 {
		imgs[i], imgs[j] = imgs[j], imgs[i]
	}
	if err := w.Restore(context.Background(), imgs); err != nil {
		t.Fatal(err)
	}
}

type env struct {
	opts   *FixOptions
	out    *bytes.Buffer
	errOut *bytes.Buffer
	ap     *testApplier
}

func newEnv(paths ...string) *env {
	ios, _, out, errOut := iostreams.Test()
	f := cli.New(cli.BuildInfo{Version: "test"})
	f.IOStreams = ios
	f.Now = func() time.Time { return clock }
	f.OpenCodeEnv = nil // the user's OpenCode config is not the test's
	ap := &testApplier{images: map[string][]store.Image{}}
	opts := &FixOptions{
		Factory: f, Paths: paths, Settle: 5 * time.Second, Abandon: 10 * time.Minute, Placeholder: "[user interrupted]",
		Apply: ap.apply,
	}
	return &env{opts: opts, out: out, errOut: errOut, ap: ap}
}

func (e *env) run(t *testing.T) error {
	t.Helper()
	return RunFix(context.Background(), e.opts)
}

func TestFixThenNothingThenUndo(t *testing.T) {
	cases := []string{"preflight-reasoning-after-tool", "preflight-blank-text", "preflight-thinking-only", "sf105-abandoned-tool"}
	for _, shape := range []store.Shape{store.ShapeSessions, store.ShapeStorage, store.ShapeSQLite} {
		t.Run(string(shape), func(t *testing.T) {
			path := materialize(t, shape, cases...)
			info := storetest.OpenOne(t, path).Info()
			before := storetest.Hash(t, path, shape)

			e := newEnv(path)
			e.opts.Yes = true
			err := e.run(t)
			if err != nil && !errors.Is(err, cli.ErrFindings) {
				t.Fatalf("fix: %v\n%s", err, e.errOut)
			}
			if !strings.Contains(e.errOut.String(), "fixed ") || !strings.Contains(e.errOut.String(), "sessfix undo run-1") {
				t.Errorf("no summary with the undo command:\n%s", e.errOut)
			}
			if storetest.Hash(t, path, shape) == before {
				t.Fatal("fix changed nothing")
			}

			again := newEnv(path)
			again.opts.Yes = true
			err = again.run(t)
			if err != nil && !errors.Is(err, cli.ErrFindings) {
				t.Fatalf("second fix: %v", err)
			}
			if again.ap.n != 0 || !strings.Contains(again.errOut.String(), "nothing to change") {
				t.Errorf("second fix wrote again:\n%s\n%s", again.out, again.errOut)
			}

			e.ap.undo(t, info, "run-1")
			if got := storetest.Hash(t, path, shape); got != before {
				t.Error("undo did not restore the store byte for byte")
			}
		})
	}
}

func TestFixDryRunDiffGolden(t *testing.T) {
	path := materialize(t, store.ShapeSessions, "preflight-blank-text", "preflight-reasoning-after-tool")
	before := storetest.Hash(t, path, store.ShapeSessions)
	e := newEnv(path)
	e.opts.DryRun, e.opts.Diff = true, true
	err := e.run(t)
	if !errors.Is(err, cli.ErrFindings) {
		t.Fatalf("a dry run that would change something must exit 1, got %v", err)
	}
	if storetest.Hash(t, path, store.ShapeSessions) != before {
		t.Fatal("--dry-run wrote to the store")
	}
	got := e.out.String()
	// Ids minted between two neighbours are deterministic, and the clock is
	// fixed, so the whole diff is golden.
	golden.Check(t, filepath.Join("..", "..", "testdata", "fix", "dry-run-diff.golden"), got)
	if strings.Contains(got, "\x1b[") {
		t.Error("piped diff has colour")
	}

	// Nothing to change: exit 0.
	clean := materialize(t, store.ShapeSessions, "sf103-negative")
	e = newEnv(clean)
	e.opts.DryRun, e.opts.Diff = true, true
	if err := e.run(t); err != nil {
		t.Errorf("clean store: %v", err)
	}
	if e.out.Len() != 0 {
		t.Errorf("clean store printed a diff:\n%s", e.out)
	}
}

func TestFixWithoutTerminalIsADryRun(t *testing.T) {
	path := materialize(t, store.ShapeStorage, "preflight-blank-text")
	before := storetest.Hash(t, path, store.ShapeStorage)
	e := newEnv(path)
	e.opts.Factory.Prompter = &cli.StubPrompter{}
	err := e.run(t)
	// The reason is the error (printed even with -q), and it exits 1.
	if !errors.Is(err, cli.ErrFindings) || err == cli.ErrFindings || !strings.Contains(err.Error(), "add --yes to write") {
		t.Errorf("err %v, stderr:\n%s", err, e.errOut)
	}
	if storetest.Hash(t, path, store.ShapeStorage) != before || e.ap.n != 0 {
		t.Error("wrote without a terminal and without --yes")
	}
	if !strings.Contains(e.out.String(), "fix SF151") {
		t.Errorf("the plan was not shown:\n%s", e.out)
	}
}

func TestFixAsksOnATerminal(t *testing.T) {
	path := materialize(t, store.ShapeSessions, "preflight-blank-text")
	for _, answer := range []bool{false, true} {
		e := newEnv(path)
		var asked string
		e.opts.Factory.Prompter = &cli.StubPrompter{Terminal: true, Answer: func(q string) (bool, error) { asked = q; return answer, nil }}
		_ = e.run(t)
		if !strings.HasPrefix(asked, "write ") {
			t.Errorf("question %q", asked)
		}
		if wrote := e.ap.n > 0; wrote != answer {
			t.Errorf("answer %v: wrote = %v", answer, wrote)
		}
	}
}

// streaming writes preflight-reasoning-after-tool (a finished turn fix
// repairs) with its newest assistant message reopened, as while OpenCode
// streams the next step, into a store of the shape, its files written
// idle before the clock it returns.
func streaming(t *testing.T, shape store.Shape, idle time.Duration) (path string, now time.Time) {
	t.Helper()
	fx, err := storetest.LoadExportFixture(filepath.Join(fixtures, "preflight-reasoning-after-tool", "session.json"))
	if err != nil {
		t.Fatal(err)
	}
	created, err := fx.Reopen()
	if err != nil {
		t.Fatal(err)
	}
	now = created.Add(time.Minute)
	path = storetest.Materialize(t, shape, t.TempDir(), fx)
	storetest.SetTimes(t, path, now.Add(-idle))
	return path, now
}

func activityOf(state store.ActivityState) func(store.Info) store.Activity {
	return func(store.Info) store.Activity { return store.Activity{State: state, PID: 42, Command: "opencode"} }
}

// TestFixSkipsBusySessions: a session whose newest assistant message is
// unfinished is skipped while it changed within the settle window, or
// OpenCode has the store open; --force fixes it loudly; once nobody has the
// store open and the window has passed it is fixed without --force.
func TestFixSkipsBusySessions(t *testing.T) {
	for _, c := range []struct {
		name     string
		idle     time.Duration
		activity store.ActivityState
		force    bool
		fixed    bool
		says     string
	}{
		{"written 1s ago", time.Second, store.ActivityNone, false, false,
			"skipped session ses_341b3a8fffffcvDVYyEn3RO9dw: its last assistant message is unfinished and the session changed 1s ago, so OpenCode may still be writing it (wait, or add --force)"},
		{"written 1s ago, --force", time.Second, store.ActivityNone, true, true,
			"WARNING: session ses_341b3a8fffffcvDVYyEn3RO9dw may still be in use (its last assistant message is unfinished and the session changed 1s ago); fixing it anyway because of --force"},
		{"quiet for 30s, OpenCode has the store open", 30 * time.Second, store.ActivityOpen, false, false,
			"its last assistant message is unfinished and opencode (pid 42) has the store open"},
		{"quiet for 30s, nobody has the store open", 30 * time.Second, store.ActivityNone, false, true, "fixed 1 session"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, now := streaming(t, store.ShapeSessions, c.idle)
			e := newEnv(path)
			e.opts.Factory.Now = func() time.Time { return now }
			e.opts.Activity = activityOf(c.activity)
			e.opts.Yes, e.opts.Force = true, c.force
			_ = e.run(t)
			if fixed := e.ap.n == 1; fixed != c.fixed || !strings.Contains(e.errOut.String(), c.says) {
				t.Errorf("fixed %v, want %v; stderr lacks %q:\n%s", fixed, c.fixed, c.says, e.errOut)
			}
		})
	}
}

// TestFixDryRunMarksBusySessions: a dry run shows the plan and the diff of
// a session it would skip, marked as such.
func TestFixDryRunMarksBusySessions(t *testing.T) {
	path, now := streaming(t, store.ShapeSessions, time.Second)
	e := newEnv(path)
	e.opts.Factory.Now = func() time.Time { return now }
	e.opts.Activity = activityOf(store.ActivityNone)
	e.opts.DryRun, e.opts.Diff = true, true
	if err := e.run(t); !errors.Is(err, cli.ErrFindings) {
		t.Errorf("err %v, want findings", err)
	}
	const why = "its last assistant message is unfinished and the session changed 1s ago, so OpenCode may still be writing it (add --force to include it)"
	if want := "# session ses_341b3a8fffffcvDVYyEn3RO9dw would be skipped: " + why + "\n# rekey part"; !strings.Contains(e.out.String(), want) {
		t.Errorf("the diff lacks %q:\n%s", want, e.out)
	}
	// The plan is the one --force writes: the unfinished turn is closed too.
	if want := "    would be skipped: " + why + "\n    fix SF153"; !strings.Contains(e.errOut.String(), want) {
		t.Errorf("the plan lacks %q:\n%s", want, e.errOut)
	}
	if !strings.Contains(e.errOut.String(), "nothing to change but the 1 session skipped above") {
		t.Errorf("a skipped session counted as one to write:\n%s", e.errOut)
	}
}

func TestFixLockedStore(t *testing.T) {
	path := materialize(t, store.ShapeSessions, "preflight-blank-text")
	info := storetest.OpenOne(t, path).Info()
	lock, err := store.AcquireLock(info)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	// The test holds the lock: to fix it is another sessfix, alive on this
	// host and recently started, so the lock is not stale.
	e := newEnv(path)
	e.opts.Yes = true
	e.opts.Apply = func(context.Context, store.Info, []*store.ChangeSet) (string, error) {
		t.Fatal("applied while the lock is held")
		return "", nil
	}
	err = e.run(t)
	if !errors.Is(err, store.ErrLocked) {
		t.Errorf("want ErrLocked, got %v", err)
	}
	if n := strings.Count(err.Error(), path); n != 1 {
		t.Errorf("the error names the store %d times: %v", n, err)
	}
	// One hint, the lock's own: who holds it and what to do.
	all := err.Error() + strings.Join(cli.Hints(err), "\n")
	if strings.Count(all, "hint:")+len(cli.Hints(err)) != 1 || !strings.Contains(all, "wait for it to finish") {
		t.Errorf("want exactly the lock's hint, got:\n%s\n%v", err, cli.Hints(err))
	}
}

// TestFixLockedStorePrintsItsDocument: a run stopped by another
// sessfix's lock (exit 4) still prints its --format json document, the
// lock as the store's error.
func TestFixLockedStorePrintsItsDocument(t *testing.T) {
	path := materialize(t, store.ShapeSessions, "preflight-blank-text")
	lock, err := store.AcquireLock(storetest.OpenOne(t, path).Info())
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	e := newEnv(path)
	e.opts.Yes = true
	e.opts.Factory.Globals.Format = "json"
	if err := e.run(t); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("want ErrLocked, got %v", err)
	}
	var doc plandoc.FixDocument
	if err := json.Unmarshal(e.out.Bytes(), &doc); err != nil {
		t.Fatalf("no JSON document: %v\n%q", err, e.out)
	}
	if doc.Written || len(doc.Stores) != 1 || doc.Stores[0].Path != path || !strings.Contains(doc.Stores[0].Error, "another sessfix") {
		t.Errorf("document %+v, want the lock as the store's error", doc)
	}
}

// TestFixNamesALockedDatabaseOnce: a database another program keeps
// locked is named once in the error, whose hint says nothing was changed.
func TestFixNamesALockedDatabaseOnce(t *testing.T) {
	path := materialize(t, store.ShapeSQLite, "preflight-blank-text")
	other, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(context.Background(), `ROLLBACK`)
	e := newEnv(path)
	e.opts.Yes = true
	e.opts.Apply = func(ctx context.Context, info store.Info, sets []*store.ChangeSet) (string, error) {
		w, err := shapes.OpenWriter(info, store.WriteOptions{BusyTimeout: 50 * time.Millisecond})
		if err != nil {
			return "", err
		}
		defer w.Close()
		for _, cs := range sets {
			if err := w.Apply(ctx, cs); err != nil {
				return "", err
			}
		}
		return "run-1", nil
	}
	err = e.run(t)
	if !errors.Is(err, store.ErrLocked) {
		t.Fatalf("want ErrLocked, got %v", err)
	}
	if n := strings.Count(err.Error(), path); n != 1 {
		t.Errorf("the error names the database %d times: %v", n, err)
	}
	if h := cli.Hints(err); len(h) != 1 || !strings.Contains(h[0], "nothing was changed") {
		t.Errorf("hints %q", h)
	}
}

func TestFixUsageErrors(t *testing.T) {
	for name, set := range map[string]func(o *FixOptions){
		"blank placeholder":   func(o *FixOptions) { o.Placeholder = "  " },
		"unknown strategy":    func(o *FixOptions) { o.Strategies = []string{"SF103=sideways"} },
		"bad strategy syntax": func(o *FixOptions) { o.Strategies = []string{"SF103"} },
		"diff without dry":    func(o *FixOptions) { o.Diff = true },
		"error without id":    func(o *FixOptions) { o.Error = "messages.1: x" },
		"unknown rule":        func(o *FixOptions) { o.Select = []string{"XX9"} },
	} {
		e := newEnv("/nonexistent")
		set(e.opts)
		var fe *cli.FlagError
		if err := e.run(t); !errors.As(err, &fe) {
			t.Errorf("%s: want a usage error, got %v", name, err)
		}
	}
}

// TestFixKeepsNoPlannedSession proves fix's memory follows the edits it
// plans, not every session that needs one: when the next session is loaded,
// no session planned before is still reachable. Every session of the
// generated store has a defect.
func TestFixKeepsNoPlannedSession(t *testing.T) {
	const sessions = 12
	path, _, err := storegen.Generate(store.ShapeSessions, t.TempDir(), storegen.Config{
		Sessions: sessions, Messages: 8, Parts: 4, ToolOutput: 200, DefectRate: 0.5, Seed: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	storetest.SetTimes(t, path, clock.Add(-time.Hour))
	var kept []*storetest.Retention
	e := newEnv(path)
	e.opts.DryRun = true
	e.opts.Factory.Open = func(paths []string) (*shapes.Discovery, error) {
		d, err := shapes.Open(paths)
		if err != nil {
			return nil, err
		}
		for i, st := range d.Stores {
			r := &storetest.Retention{Store: st}
			d.Stores[i] = r
			kept = append(kept, r)
		}
		return d, nil
	}
	if err := e.run(t); !errors.Is(err, cli.ErrFindings) {
		t.Fatalf("dry run: %v\n%s", err, e.errOut)
	}
	if n := strings.Count(e.out.String(), "  session "); n != sessions {
		t.Fatalf("planned %d sessions, want all %d:\n%s", n, sessions, e.out)
	}
	if len(kept) != 1 || kept[0].Loaded() != sessions {
		t.Fatalf("stores %d, want 1 that loaded every session", len(kept))
	}
	// The session being loaded is not counted: each other worker may hold
	// the one it is planning.
	if got, limit := kept[0].MaxAlive(), runtime.GOMAXPROCS(0); got > limit {
		t.Errorf("while planning, %d planned sessions were still reachable (limit %d): fix keeps loaded sessions until it writes", got, limit)
	}
}

// slowStore makes every Load take a while, so planning outlasts the
// progress indicator's delay.
type slowStore struct {
	store.Store
	delay time.Duration
}

func (s slowStore) Load(ctx context.Context, ref store.SessionRef) (*store.Session, error) {
	time.Sleep(s.delay)
	return s.Store.Load(ctx, ref)
}

// openSlowly opens the stores as shapes.Open does, each load slowed past
// the progress delay: one load alone outlasts it, however many workers.
func openSlowly(paths []string) (*shapes.Discovery, error) {
	d, err := shapes.Open(paths)
	if err != nil {
		return nil, err
	}
	for i, st := range d.Stores {
		d.Stores[i] = slowStore{Store: st, delay: iostreams.ProgressDelay + 100*time.Millisecond}
	}
	return d, nil
}

// TestFixShowsPlanningProgressOnATerminal: planning that outlasts the
// progress delay shows the counter on a terminal's stderr, and nothing
// when stderr is not a terminal.
func TestFixShowsPlanningProgressOnATerminal(t *testing.T) {
	path, _, err := storegen.Generate(store.ShapeSessions, t.TempDir(), storegen.Config{
		Sessions: 2, Messages: 4, Parts: 4, ToolOutput: 100, DefectRate: -1, Seed: 5,
	})
	if err != nil {
		t.Fatal(err)
	}
	storetest.SetTimes(t, path, clock.Add(-time.Hour))
	for _, tty := range []bool{true, false} {
		e := newEnv(path)
		e.opts.DryRun = true
		e.opts.Factory.IOStreams.SetStderrTTY(tty)
		e.opts.Factory.Open = openSlowly
		if err := e.run(t); err != nil && !errors.Is(err, cli.ErrFindings) {
			t.Fatal(err)
		}
		if got := strings.Contains(e.errOut.String(), "planning"); got != tty {
			t.Errorf("stderr a terminal: %v; progress shown: %v\n%q", tty, got, e.errOut)
		}
	}
}
