package fix

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// The fixtures were recorded in 2026; a day after it they are all quiet.
var pipeClock = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func testPipeline(t *testing.T) *Pipeline { return testPipelineAt(t, pipeClock) }

// testPipelineAt is testPipeline on a clock stopped at at.
func testPipelineAt(t *testing.T, at time.Time) *Pipeline {
	now := func() time.Time { return at }
	sopts := &scan.Options{Now: now}
	return &Pipeline{
		Scan:      sopts,
		Fix:       Options{Now: now},
		SkipInUse: true,
		Write:     WriteOptions{Backup: backup.Options{Dir: t.TempDir(), Now: now}},
	}
}

// pipelineStore materialises fixture cases, quiet for a day, and its
// targets in list order.
func pipelineStore(t *testing.T, p *Pipeline, shape store.Shape, cases ...string) (string, []Target) {
	t.Helper()
	path := storetest.MaterializeCases(t, shape, fixtureRoot, pipeClock.Add(-24*time.Hour), cases...)
	targets, err := p.Targets(context.Background(), storetest.OpenOne(t, path))
	if err != nil {
		t.Fatal(err)
	}
	return path, targets
}

func collect(t *testing.T, run func(context.Context, []Target, func(Outcome) bool) error, targets []Target) []Outcome {
	t.Helper()
	var out []Outcome
	if err := run(context.Background(), targets, func(o Outcome) bool { out = append(out, o); return true }); err != nil {
		t.Fatal(err)
	}
	return out
}

func statuses(os []Outcome) []Status {
	var out []Status
	for _, o := range os {
		out = append(out, o.Status)
	}
	return out
}

func TestPipelinePlanOutcomes(t *testing.T) {
	p := testPipeline(t)
	_, targets := pipelineStore(t, p, store.ShapeSessions, "preflight-blank-text", "tool-loop-negative", "sf302-negative")
	got := collect(t, p.Plan, targets)
	if len(got) != len(targets) {
		t.Fatalf("%d outcomes for %d targets", len(got), len(targets))
	}
	for i, o := range got {
		if o.ID != targets[i].Ref.ID {
			t.Errorf("outcome %d is session %s, want %s: not in the targets' order", i, o.ID, targets[i].Ref.ID)
		}
		switch {
		case o.Changes():
			if o.Status != Planned || o.Plan.Changes == nil || len(o.Plan.Fixed) == 0 {
				t.Errorf("%s: status %v, plan %+v", o.ID, o.Status, o.Plan)
			}
		case o.Status == Planned:
			if len(o.Plan.Unfixed) == 0 && len(o.Plan.Notes) == 0 {
				t.Errorf("%s: planned with nothing to say", o.ID)
			}
		case o.Status != Clean:
			t.Errorf("%s: status %v, want clean", o.ID, o.Status)
		}
	}
	if !slices.Contains(statuses(got), Clean) || !slices.ContainsFunc(got, Outcome.Changes) {
		t.Errorf("want one clean and one changing session, got %v", statuses(got))
	}
}

// streamingStore materialises preflight-reasoning-after-tool (a finished
// turn whose thinking comes after its tool call, which fix repairs) with
// its newest assistant message reopened, as while OpenCode streams the
// next step (storetest.Fixture.Reopen), its files written at mod, and
// returns the store's path and target.
func streamingStore(t *testing.T, p *Pipeline, shape store.Shape, mod time.Time) (string, []Target) {
	t.Helper()
	fx, err := storetest.LoadExportFixture(fixtureRoot + "/preflight-reasoning-after-tool/session.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fx.Reopen(); err != nil {
		t.Fatal(err)
	}
	path := storetest.Materialize(t, shape, t.TempDir(), fx)
	storetest.SetTimes(t, path, mod)
	targets, err := p.Targets(context.Background(), storetest.OpenOne(t, path))
	if err != nil {
		t.Fatal(err)
	}
	return path, targets
}

// TestPipelineSettlePolicy: a session whose newest assistant message is
// unfinished is skipped while the settle policy says it is in use (written
// within the settle window; or the store open elsewhere), or planned
// anyway (Forced) with Force; without a policy check (the watcher's
// pipeline) it is planned. Once the window has passed in a store nobody
// has open it is planned, in an export at once, and a failed attempt
// stored just now is planned whoever has the store open.
func TestPipelineSettlePolicy(t *testing.T) {
	fx, err := storetest.LoadExportFixture(fixtureRoot + "/preflight-reasoning-after-tool/session.json")
	if err != nil {
		t.Fatal(err)
	}
	created, err := fx.Reopen()
	if err != nil {
		t.Fatal(err)
	}
	now := created.Add(10 * time.Second)
	nobody := func(store.Info) store.Activity { return store.Activity{State: store.ActivityNone} }
	ocHolds := func(store.Info) store.Activity {
		return store.Activity{State: store.ActivityOpen, PID: 42, Command: "opencode"}
	}

	p := testPipelineAt(t, now)
	p.Scan.Activity = nobody
	_, targets := streamingStore(t, p, store.ShapeStorage, now.Add(-2*time.Second))
	if o := collect(t, p.Plan, targets)[0]; o.Status != SkippedBusy || o.Use.Age != 2*time.Second || !o.Changes() || !strings.Contains(o.Use.Why, "changed 2s ago") {
		t.Errorf("unfinished, written 2s ago: %v, %+v", o.Status, o.Use)
	}
	p.Force = true
	if o := collect(t, p.Plan, targets)[0]; o.Status != Planned || !o.Forced || o.Use.Age != 2*time.Second {
		t.Errorf("with Force: %v, forced %v, %+v", o.Status, o.Forced, o.Use)
	}
	p.Force, p.SkipInUse = false, false
	if o := collect(t, p.Plan, targets)[0]; o.Status != Planned || o.Forced {
		t.Errorf("without the check: %v, forced %v", o.Status, o.Forced)
	}

	p = testPipelineAt(t, now)
	p.Scan.Activity = nobody
	_, targets = streamingStore(t, p, store.ShapeSQLite, now.Add(-6*time.Second))
	if o := collect(t, p.Plan, targets)[0]; o.Status != Planned || !o.Changes() {
		t.Errorf("unfinished, quiet for 6s, nobody has the store open: %v (%s)", o.Status, o.Use.Why)
	}
	p.Scan.Activity = ocHolds
	if o := collect(t, p.Plan, targets)[0]; o.Status != SkippedBusy || o.Use.Why != "its last assistant message is unfinished and opencode (pid 42) has the store open (it counts as in progress until it has been quiet for 10m0s)" {
		t.Errorf("unfinished, quiet for 6s, OpenCode has the store open: %v (%s)", o.Status, o.Use.Why)
	}

	p = testPipelineAt(t, now)
	_, targets = streamingStore(t, p, store.ShapeExport, now)
	p.Scan.Activity = opencode.StoreActivity([]store.Store{targets[0].Store})
	if o := collect(t, p.Plan, targets)[0]; o.Status != Planned || !o.Changes() {
		t.Errorf("an export written just now: %v (%s)", o.Status, o.Use.Why)
	}

	p = testPipeline(t)
	p.Scan.Activity = ocHolds
	failed, failedTargets := pipelineStore(t, p, store.ShapeSQLite, "sf302-failed-attempt")
	storetest.SetTimes(t, failed, pipeClock)
	if o := collect(t, p.Plan, failedTargets)[0]; o.Status != Planned || !o.Changes() {
		t.Errorf("a failed attempt stored just now: %v (%s)", o.Status, o.Use.Why)
	}
}

func TestPipelineAdmitHoldsSessions(t *testing.T) {
	p := testPipeline(t)
	_, targets := pipelineStore(t, p, store.ShapeSessions, "preflight-blank-text", "preflight-reasoning-after-tool")
	held := targets[0].Ref.ID
	var asked []string
	p.Admit = func(tg Target, s *store.Session) bool {
		if s.ID != tg.Ref.ID || len(s.Messages) == 0 {
			t.Errorf("Admit got session %s (%d messages) for target %s", s.ID, len(s.Messages), tg.Ref.ID)
		}
		asked = append(asked, s.ID)
		return s.ID != held
	}
	p.Workers = 1
	got := collect(t, p.Plan, targets)
	if len(asked) != 2 || got[0].Status != Held || got[0].Plan != nil || got[1].Status != Planned {
		t.Errorf("asked %v; outcomes %v", asked, statuses(got))
	}
}

// failingStore fails to load one session.
type failingStore struct {
	store.Store
	bad string
}

func (f failingStore) Load(ctx context.Context, ref store.SessionRef) (*store.Session, error) {
	if ref.ID == f.bad {
		return nil, errors.New("unreadable")
	}
	return f.Store.Load(ctx, ref)
}

func TestPipelineFailures(t *testing.T) {
	p := testPipeline(t)
	path, targets := pipelineStore(t, p, store.ShapeSessions, "preflight-blank-text", "preflight-reasoning-after-tool", "tool-loop-negative")
	fs := failingStore{Store: storetest.OpenOne(t, path), bad: targets[0].Ref.ID}
	for i := range targets {
		targets[i].Store = fs
	}
	got := collect(t, p.Plan, targets)
	if o := got[0]; o.Status != Failed || o.Step != StepLoad || o.Err == nil || o.ID != fs.bad {
		t.Errorf("unloadable session: %+v", o)
	}
	if len(got) != 3 {
		t.Errorf("a session that does not load stopped the run: %v", statuses(got))
	}

	// A plan that fails ends the run: nothing after it is started.
	p.Fix.Placeholder = " "
	var loads atomic.Int64
	counting := countingStore{Store: storetest.OpenOne(t, path), loads: &loads}
	for i := range targets {
		targets[i].Store = counting
	}
	p.Workers = 1
	got = collect(t, p.Plan, targets)
	if len(got) != 1 || got[0].Status != Failed || got[0].Step != StepPlan || loads.Load() != 1 {
		t.Errorf("after a failed plan: outcomes %v, %d sessions loaded", statuses(got), loads.Load())
	}
}

type countingStore struct {
	store.Store
	loads *atomic.Int64
}

func (c countingStore) Load(ctx context.Context, ref store.SessionRef) (*store.Session, error) {
	c.loads.Add(1)
	return c.Store.Load(ctx, ref)
}

func TestPipelineCancelled(t *testing.T) {
	p := testPipeline(t)
	_, targets := pipelineStore(t, p, store.ShapeSessions, "preflight-blank-text", "tool-loop-negative")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n := 0
	if err := p.Plan(ctx, targets, func(Outcome) bool { n++; return true }); !errors.Is(err, context.Canceled) || n != 0 {
		t.Errorf("cancelled: err %v, %d outcomes", err, n)
	}
}

// TestPipelineRepairEqualsPlanThenApply: the watcher's path (Repair, one
// backup run per session) and fix's (Plan every session, then Apply each
// store's plans in one run) write the same bytes, in every shape that can
// be written.
func TestPipelineRepairEqualsPlanThenApply(t *testing.T) {
	cases := []string{"preflight-blank-text", "preflight-reasoning-after-tool", "preflight-thinking-only", "sf105-abandoned-tool", "tool-loop-negative"}
	for _, shape := range []store.Shape{store.ShapeSessions, store.ShapeStorage, store.ShapeProject, store.ShapeSQLite} {
		t.Run(string(shape), func(t *testing.T) {
			fixPipe, watchPipe := testPipeline(t), testPipeline(t)
			watchPipe.SkipInUse, watchPipe.Workers = false, 1
			fixPath, fixTargets := pipelineStore(t, fixPipe, shape, cases...)
			watchPath, watchTargets := pipelineStore(t, watchPipe, shape, cases...)
			before := storetest.Hash(t, fixPath, shape)

			planned := collect(t, fixPipe.Plan, fixTargets)
			run, err := fixPipe.Apply(context.Background(), fixTargets[0].Store, planned)
			if err != nil || run == "" {
				t.Fatalf("apply: run %q, %v", run, err)
			}
			repaired := collect(t, watchPipe.Repair, watchTargets)
			runs := map[string]bool{}
			for i, o := range repaired {
				if planned[i].Changes() != (o.Status == Applied) || o.Status == Failed {
					t.Errorf("%s: planned %v, repaired %v (%v)", o.ID, planned[i].Status, o.Status, o.Err)
				}
				if o.Status == Applied {
					runs[o.Run] = true
				}
			}
			if len(runs) < 2 {
				t.Errorf("repair wrote %d backup runs, want one per session", len(runs))
			}
			after := storetest.Hash(t, fixPath, shape)
			if after == before {
				t.Fatal("nothing was written")
			}
			if got := storetest.Hash(t, watchPath, shape); got != after {
				t.Error("Repair and Plan+Apply wrote different stores")
			}
			if again := collect(t, watchPipe.Repair, watchTargets); slices.Contains(statuses(again), Applied) {
				t.Errorf("a second repair wrote again: %v", statuses(again))
			}
		})
	}
}

// TestPipelineRepairReplansUnderTheLock: a session another sessfix
// repairs after Repair loaded it is planned again under the writer lock
// and left alone, never written from the stale plan (which the writer
// would refuse as changed).
func TestPipelineRepairReplansUnderTheLock(t *testing.T) {
	for _, shape := range []store.Shape{store.ShapeStorage, store.ShapeSQLite} {
		t.Run(string(shape), func(t *testing.T) {
			other, p := testPipeline(t), testPipeline(t)
			p.SkipInUse, p.Workers = false, 1
			_, targets := pipelineStore(t, p, shape, "preflight-blank-text")
			p.Admit = func(tg Target, _ *store.Session) bool {
				// The other run repairs the session after this one loaded it.
				planned := collect(t, other.Plan, []Target{tg})
				if run, err := other.Apply(context.Background(), tg.Store, planned); err != nil || run == "" {
					t.Fatalf("the other run: %q, %v", run, err)
				}
				return true
			}
			got := collect(t, p.Repair, targets)
			if o := got[0]; o.Status == Failed || o.Status == Applied || o.Changes() {
				t.Errorf("a session repaired meanwhile: %v, changes %v, err %v", o.Status, o.Changes(), o.Err)
			}
		})
	}
}

func TestStatusString(t *testing.T) {
	var names []string
	for s := Clean; s <= Failed; s++ {
		names = append(names, s.String())
	}
	if got := strings.Join(names, " "); got != "clean planned skipped-busy held applied failed" {
		t.Errorf("status names %q", got)
	}
}
