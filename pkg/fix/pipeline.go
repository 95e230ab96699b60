package fix

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/sessfix/sessfix/internal/faultpoint"
	"github.com/sessfix/sessfix/internal/pool"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

// Pipeline is sessfix's one repair pipeline: list a store's sessions, load
// each, check it, drop what the user suppressed, plan the repair, hold back
// what the settle policy says may be in use, then write under the store's
// writer lock with a backup and verify from disk. `sessfix fix` plans every
// session first and writes each store's plans in one backup run (Plan, then
// Apply); `sessfix watch` repairs one session at a time as it settles
// (Repair). Sessions are planned on an ordered worker pool (internal/pool,
// shared with scan.Run) and reported in the order they were given.
type Pipeline struct {
	// Scan holds the rule filters (Select, Ignore), the settle window and
	// the clock the findings are checked with. Validation and verification
	// always run every rule, whatever the filters.
	Scan *scan.Options
	// Fix holds the repair choices (Strategies, Placeholder) and the clock
	// for new ids; its Scan defaults to the pipeline's.
	Fix Options
	// Sessions limits Targets to these session ids (empty: every session).
	Sessions []string
	// Suppressed reports the findings the user suppressed (the config
	// file's suppressions): they are left as they are.
	Suppressed func(scan.Finding) bool
	// Error, when set, plans the repair of this provider error
	// (PlanFromError) instead of the session's findings.
	Error string
	// Planner, when set, plans each session instead of the rules: a cut
	// the user chose (pkg/surgery), run through the same busy check,
	// lock, backup, apply and read-back as a repair.
	Planner func(s *store.Session) (*SessionPlan, error)
	// SkipInUse asks the settle policy of Scan (Scan.Policy) about every
	// session before it is checked: a session it says OpenCode may be
	// writing is planned as if it were not (Scan.IgnoringUse: its
	// unfinished turn closed with the rest of its repairs), so that a dry
	// run shows the repair held back, and is SkippedBusy, or Forced with
	// Force. The watcher leaves it off: it asks the same policy itself, in
	// Admit, and leaves a session in use unplanned.
	SkipInUse bool
	// Force plans sessions the settle policy calls busy anyway.
	Force bool
	// Admit, when set, is asked about every loaded session before it is
	// checked; false leaves it Held, unchecked (the watcher's wait and
	// skip decisions).
	Admit func(t Target, s *store.Session) bool
	// Workers plan sessions concurrently; zero means GOMAXPROCS, one plans
	// them one at a time on the caller's goroutine.
	Workers int
	// Progress, when set, is called after each planned session.
	Progress func(done, total int)
	// Write locates the backup journal (and replaces the apply step in
	// tests); its Scan defaults to the pipeline's.
	Write WriteOptions
}

// Target is one session to run through the pipeline.
type Target struct {
	Store store.Store
	Ref   store.SessionRef
}

// Status says where a session's run through the pipeline ended.
type Status int

const (
	// Clean: checked; nothing to repair and nothing to say.
	Clean Status = iota
	// Planned: a plan to show or write. It may change nothing and only
	// hold findings it leaves alone, or notes.
	Planned
	// SkippedBusy: the plan changes something, but the settle policy says
	// the session may be in use; Use says why. The plan is kept, for a dry
	// run to show.
	SkippedBusy
	// Held: Admit held the session back; nothing was checked.
	Held
	// Applied: the plan was written and verified; Run names the backup run.
	Applied
	// Failed: the Step failed with Err.
	Failed
)

var statusNames = [...]string{"clean", "planned", "skipped-busy", "held", "applied", "failed"}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("status(%d)", int(s))
}

// Step names the step of the pipeline a session failed at.
type Step string

// Steps.
const (
	StepLoad  Step = "load"
	StepPlan  Step = "plan"
	StepWrite Step = "write"
)

// Outcome is what the pipeline did with one session. It holds the plan, not
// the loaded session: memory follows the edits planned, not the size of
// every session that needs one.
type Outcome struct {
	Target
	// ID and Title name the session (the ref's, when it did not load).
	ID, Title string
	Status    Status
	// Plan is set once the session was planned.
	Plan *SessionPlan
	// Use is the settle policy's verdict, set when it says the session
	// may be in use (SkippedBusy, or Forced when Force planned it anyway).
	Use    opencode.Use
	Forced bool
	// Step and Err say what failed.
	Step Step
	Err  error
	// Run is the backup run a write made; on a failed write it is set when
	// something was written, so it can be undone.
	Run string
}

// Changes reports whether the outcome carries a plan that changes
// something.
func (o Outcome) Changes() bool { return !o.Plan.Empty() }

// Targets lists a store's sessions, keeping those Sessions selects.
func (p *Pipeline) Targets(ctx context.Context, st store.Store) ([]Target, error) {
	refs, err := st.List(ctx)
	if err != nil {
		info := st.Info()
		return nil, fmt.Errorf("cannot list the sessions of %s store %s: %w", info.Shape, info.Path, err)
	}
	var out []Target
	for _, ref := range refs {
		if len(p.Sessions) == 0 || slices.Contains(p.Sessions, ref.ID) {
			out = append(out, Target{Store: st, Ref: ref})
		}
	}
	return out, nil
}

// Plan loads, checks and plans the targets and yields one outcome per
// target, in their order: Clean, Planned, SkippedBusy, Held, or Failed at
// StepLoad or StepPlan. It writes nothing. A plan that fails ends the run
// after its outcome (no new session is started); yield returning false ends
// it too. Plan returns ctx's error when the context ended the run before
// every target was yielded.
func (p *Pipeline) Plan(ctx context.Context, targets []Target, yield func(Outcome) bool) error {
	p = p.withDefaults()
	planFailed := func(o Outcome) bool { return o.Status == Failed && o.Step == StepPlan }
	work := func(ctx context.Context, i int) Outcome { return p.planOne(ctx, targets[i]) }
	emit := func(_ int, o Outcome) bool {
		faultpoint.Hit("planned " + o.ID)
		return yield(o)
	}
	_, err := pool.Ordered(ctx, len(targets), pool.Options[Outcome]{Workers: p.Workers, Progress: p.Progress, Stop: planFailed}, work, emit)
	return err
}

// Repair is Plan that also writes: each planned session that changes
// something is written at once, in its own backup run, and yielded as
// Applied, or Failed at StepWrite. The plan written is made under the
// store's writer lock (repairLocked): a session another sessfix repaired
// meanwhile is planned afresh, not written from a stale plan. Once ctx has
// ended nothing more is written: a planned session not yet written is not
// yielded, and Repair returns ctx's error.
func (p *Pipeline) Repair(ctx context.Context, targets []Target, yield func(Outcome) bool) error {
	var stopped error
	err := p.Plan(ctx, targets, func(o Outcome) bool {
		if o.Status == Planned && o.Changes() {
			if stopped = ctx.Err(); stopped != nil {
				return false
			}
			o = p.repairLocked(ctx, o)
		}
		return yield(o)
	})
	if err == nil {
		err = stopped
	}
	return err
}

// repairLocked opens a write transaction on the session's store (taking
// its writer lock), plans the session again in it (without Admit: the
// session was admitted already) and writes that plan. An outcome that no
// longer changes anything (another sessfix repaired the session) is
// returned as planned now, unwritten.
func (p *Pipeline) repairLocked(ctx context.Context, o Outcome) Outcome {
	q := *p.withDefaults()
	tx, err := Begin(ctx, o.Store, q.Write, false)
	if err != nil {
		o.Status, o.Step, o.Err = Failed, StepWrite, err
		return o
	}
	q.Admit = nil
	o = q.planOne(ctx, o.Target)
	var run string
	if o.Status == Planned && o.Changes() {
		run, err = tx.apply(ctx, []Outcome{o})
	}
	if cerr := tx.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if o.Status != Planned || !o.Changes() {
		return o
	}
	o.Status, o.Run = Applied, run
	if err != nil {
		o.Status, o.Step, o.Err = Failed, StepWrite, err
	}
	return o
}

// Begin opens a write transaction on st (Begin) with the pipeline's write
// options: its verification scans with the pipeline's settle window and
// clock.
func (p *Pipeline) Begin(ctx context.Context, st store.Store, dryRun bool) (*Tx, error) {
	return Begin(ctx, st, p.withDefaults().Write, dryRun)
}

// Apply writes the plans of one store's outcomes that change something, in
// one write transaction of their own (Begin, Tx.Apply, Tx.Close): it takes
// the store's writer lock, backs every record up, applies each change set
// atomically, verifies the sessions from disk and releases the lock. It
// returns the run id (set on failure too when something was written, so it
// can be undone) and the error; an error wrapping store.ErrLocked means
// nothing was written.
func (p *Pipeline) Apply(ctx context.Context, st store.Store, planned []Outcome) (run string, err error) {
	if !slices.ContainsFunc(planned, Outcome.Changes) {
		return "", nil
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	tx, err := p.Begin(ctx, st, false)
	if err != nil {
		return "", err
	}
	run, err = tx.Apply(ctx, planned)
	if cerr := tx.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return run, err
}

// withDefaults returns a copy with Fix.Scan and Write.Scan defaulted to
// Scan.
func (p *Pipeline) withDefaults() *Pipeline {
	c := *p
	if c.Scan == nil {
		c.Scan = &scan.Options{}
	}
	if c.Fix.Scan == nil {
		c.Fix.Scan = c.Scan
	}
	if c.Write.Scan == nil {
		c.Write.Scan = c.Scan
	}
	return &c
}

// planOne runs one session through load, Admit, check, plan and the settle
// policy.
func (p *Pipeline) planOne(ctx context.Context, t Target) Outcome {
	o := Outcome{Target: t, ID: t.Ref.ID, Title: t.Ref.Title}
	s, err := t.Store.Load(ctx, t.Ref)
	if err != nil {
		o.Status, o.Step, o.Err = Failed, StepLoad, err
		return o
	}
	o.ID, o.Title = s.ID, strings.Clone(s.Title)
	if p.Admit != nil && !p.Admit(t, s) {
		o.Status = Held
		return o
	}
	// A session the settle policy says may be in use is planned as if it
	// were not (its unfinished turn included), so that a dry run shows the
	// repair it holds back and --force writes it.
	var use opencode.Use
	planner := p
	if p.SkipInUse {
		if u := p.Scan.Policy().Check(s, p.Fix.now()); u.InUse {
			use, planner = u, p.ignoringUse()
		}
	}
	plan, err := planner.planSession(s)
	if err != nil {
		o.Status, o.Step, o.Err = Failed, StepPlan, err
		return o
	}
	o.Plan, o.Status = plan, Planned
	if plan.Empty() && len(plan.Unfixed) == 0 && len(plan.Notes) == 0 {
		o.Status = Clean
		return o
	}
	if plan.Empty() || !use.InUse {
		return o
	}
	o.Use = use
	if !p.Force {
		o.Status = SkippedBusy
		return o
	}
	o.Forced = true
	return o
}

// ignoringUse is p with a settle policy that calls no session in use (no
// settle or abandon window, nobody else using the store): the rules then
// report an unfinished turn as abandoned, and the planner repairs it.
func (p *Pipeline) ignoringUse() *Pipeline {
	q := *p
	q.Scan = p.Scan.IgnoringUse()
	if p.Fix.Scan == p.Scan {
		q.Fix.Scan = q.Scan
	} else {
		q.Fix.Scan = p.Fix.Scan.IgnoringUse()
	}
	return &q
}

// planSession checks s and plans its repair.
func (p *Pipeline) planSession(s *store.Session) (*SessionPlan, error) {
	p.Scan.ReadPackages(s)
	if p.Planner != nil {
		return p.Planner(s)
	}
	if p.Error != "" {
		return PlanFromError(s, p.Error, p.Fix)
	}
	if len(p.Scan.Select) > 0 || len(p.Scan.Ignore) > 0 {
		all := append(scan.OversizedParts(s, p.Scan), scan.CheckSession(s, p.Scan)...)
		return Plan(s, p.unsuppressed(all), p.Fix)
	}
	// Every rule runs: the planner's own check of the session is this one,
	// and so is its coupling when validation checks with the same options.
	all, coupling := scan.CheckSessionCoupling(s, p.Scan)
	if p.Fix.Scan != p.Scan || p.Scan.Now == nil && p.Fix.Now != nil {
		coupling = nil
	}
	// SF503 is measured on the database's rows, not by the session check:
	// the loaded session's parts say it again for the planner, first, as
	// the scan reports it: moving the payload out keeps it as a file, which
	// the placeholders of the request rules (SF175) would not.
	fix := append(p.unsuppressed(scan.OversizedParts(s, p.Scan)), p.unsuppressed(all)...)
	return plan(s, checked(all), fix, coupling, p.Fix)
}

// unsuppressed drops the findings the user suppressed.
func (p *Pipeline) unsuppressed(fs []scan.Finding) []scan.Finding {
	if p.Suppressed == nil {
		return fs
	}
	out := fs[:0:0]
	for _, f := range fs {
		if !p.Suppressed(f) {
			out = append(out, f)
		}
	}
	return out
}
