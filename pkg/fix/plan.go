package fix

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

// Options configure planning.
type Options struct {
	// Strategies picks one strategy per rule code ("SF103" → "strip"); see
	// Strategies. A chosen strategy is the only one tried for that rule.
	Strategies map[string]string
	// Placeholder is the text for empty and injected text parts; empty means
	// DefaultPlaceholder. It must contain non-whitespace text.
	Placeholder string
	// Now is the clock for new ids and timestamps; nil means time.Now.
	Now func() time.Time
	// Scan holds the scan options validation runs with (the settle
	// policy's windows and activity, the clock, OpenCode's environment). Its rule filters are ignored: validation always runs every
	// rule, so a repair cannot hide a new problem behind --select.
	Scan *scan.Options
	// Check replaces scan.CheckSession for validation (tests).
	Check func(*store.Session) []scan.Finding

	// oneAtATime checks every repair on its own, one after another, as
	// joint verification (joint.go) must match (tests).
	oneAtATime bool
}

func (o *Options) now() time.Time {
	if o != nil && o.Now != nil {
		return o.Now()
	}
	if o != nil && o.Scan != nil && o.Scan.Now != nil {
		return o.Scan.Now()
	}
	return time.Now()
}

func (o *Options) check(s *store.Session) []scan.Finding {
	if o.Check != nil {
		return o.Check(s)
	}
	return scan.CheckSession(s, o.validation())
}

// checkCoupled is check that also returns the session's coupling
// (joint.go).
func (o *Options) checkCoupled(s *store.Session) ([]scan.Finding, *scan.Coupling) {
	if o.Check != nil {
		return o.Check(s), scan.SessionCoupling(s, o.validation())
	}
	fs, coup := scan.CheckSessionCoupling(s, o.validation())
	return fs, coup()
}

// validation is the scan options a repair is validated with: every rule,
// opts.Scan's settle window, and the clock.
func (o *Options) validation() *scan.Options {
	so := scan.Options{}
	if o.Scan != nil {
		// The settle policy the session was checked with: validation must
		// judge whether it is in use as the check did.
		so.Settle, so.Abandon, so.Activity, so.Now = o.Scan.Settle, o.Scan.Abandon, o.Scan.Activity, o.Scan.Now
		so.OpenCode, so.Oversized = o.Scan.OpenCode, o.Scan.Oversized
	}
	if so.Now == nil && o.Now != nil {
		so.Now = o.Now
	}
	return &so
}

// SessionPlan is the repair of one session: the change set to apply and what it
// does and does not fix.
type SessionPlan struct {
	Store     store.Info
	SessionID string
	// Changes holds the edits in the order to apply them; each record
	// appears at most once.
	Changes *store.ChangeSet
	// Fixed lists the findings the change set repairs.
	Fixed []Repair
	// Unfixed lists findings left alone, with the reason.
	Unfixed []Unfixed
	// Skipped lists edits dropped when merging (superseded by a delete).
	Skipped []Skipped
	// Notes are facts for the user (error-driven recovery's mapping, ...).
	Notes []string
}

// Repair says how one finding is fixed.
type Repair struct {
	Finding scan.Finding
	// Strategy is the strategy used; empty when an earlier repair in the
	// same plan already fixed the finding.
	Strategy string
	// Mutations names the mutations applied.
	Mutations string
	// Edits is how many edits the strategy planned.
	Edits int
}

// Unfixed is a finding the plan does not repair.
type Unfixed struct {
	Finding scan.Finding
	Reason  string
}

// Skipped is an edit dropped while merging the plan.
type Skipped struct {
	Edit   store.Edit
	Reason string
}

// Empty reports whether the plan changes nothing.
func (p *SessionPlan) Empty() bool { return p == nil || p.Changes.Empty() }

// EditsByRule counts the plan's edits per rule code.
func (p *SessionPlan) EditsByRule() map[string]int {
	out := map[string]int{}
	if p == nil || p.Changes == nil {
		return out
	}
	for _, e := range p.Changes.Edits {
		for _, r := range strings.Split(e.Rule, ",") {
			out[r]++
		}
	}
	return out
}

// work is the planner's state: the working copy of the session with every
// accepted repair applied, and its current findings.
type work struct {
	orig     *store.Session
	s        *store.Session
	findings []scan.Finding
	// origFindings are orig's findings.
	origFindings []scan.Finding
	// coup is s's coupling (joint.go), nil until asked; origCoupling tells
	// orig's, from the check that found its findings (nil: compute it).
	coup         *scan.Coupling
	origCoupling func() *scan.Coupling
	env          env
	opts         *Options
	// planned holds the findings (findingKey) that have a step already.
	planned map[string]bool
	// index answers lookups in s (lookup).
	index sessionIndex
}

// step is one finding's repair: strategies to try, and how to tell the
// defect is gone.
type step struct {
	f      scan.Finding
	strats []strat
	// gone reports, on a candidate session and its findings, whether the
	// finding's defect is repaired.
	gone func(s *store.Session, fs []scan.Finding) bool
	// why is set when nothing can be tried (report-only rules, unmappable errors).
	why string
	// leftWhy explains an unfixed finding that has no strategy of its own
	// (a stored error without an index, covered only by other repairs).
	leftWhy string
	// note is told to the user whatever happens.
	note string
	// done is set when there is nothing to do (the note says why).
	done bool
}

// Plan computes the repair of one session from its findings. Findings are
// taken in order, and each finding's strategies (its rule's defaults, or the
// one chosen in Options.Strategies) are tried in order; a strategy is
// accepted when, with its edits applied to the working copy of the session
// (holding every earlier accepted repair), the finding is gone and no
// finding appears that was not there before. Repairs that cannot change each
// other's findings are checked together, with the decisions checking them
// one after another gives (joint verification, joint.go). Edits of accepted
// strategies are merged into one change set (several edits of the same
// record become one; a delete wins) and the merged change set is validated
// once more against the original session.
func Plan(s *store.Session, findings []scan.Finding, opts Options) (*SessionPlan, error) {
	return plan(s, nil, findings, nil, opts)
}

// PlanChecked is Plan for a caller that has already checked the session
// under every rule, with opts.Scan's settle window and clock (scan.CheckSession
// with no rule selected or ignored): all is that result, and the session is
// not checked again. findings are the ones to repair, as for Plan.
func PlanChecked(s *store.Session, all, findings []scan.Finding, opts Options) (*SessionPlan, error) {
	return plan(s, checked(all), findings, nil, opts)
}

// checked marks a check's result as one: nil means clean, not unchecked.
func checked(all []scan.Finding) []scan.Finding {
	if all == nil {
		return []scan.Finding{}
	}
	return all
}

// plan plans the repair of s; all are its findings under every rule (nil:
// check it here), and coupling, when not nil, tells its coupling from that
// check.
func plan(s *store.Session, all, findings []scan.Finding, coupling func() *scan.Coupling, opts Options) (*SessionPlan, error) {
	w, err := newWork(s, &opts, all)
	if err != nil {
		return nil, err
	}
	w.origCoupling = coupling
	var steps []step
	var stored []scan.Finding
	for _, f := range findings {
		if f.SessionID != "" && f.SessionID != s.ID {
			continue
		}
		// A stored provider error goes last: when it names no message, the
		// repairs of the findings that cause it are what clears it.
		if f.Code == scan.SF302 {
			stored = append(stored, f)
			continue
		}
		w.planned[findingKey(f)] = true
		steps = append(steps, w.stepFor(f))
	}
	for _, f := range stored {
		steps = append(steps, w.storedErrorSteps(f)...)
	}
	return w.run(steps)
}

// newWork starts planning s; all is the session's findings under every
// rule, or nil to check it here.
func newWork(s *store.Session, opts *Options, all []scan.Finding) (*work, error) {
	ph := opts.Placeholder
	if ph == "" {
		ph = DefaultPlaceholder
	}
	if err := ValidatePlaceholder(ph); err != nil {
		return nil, err
	}
	if err := ValidateStrategies(opts.Strategies); err != nil {
		return nil, err
	}
	w := &work{orig: s, s: s, env: env{now: opts.now(), placeholder: ph}, opts: opts, planned: map[string]bool{}}
	w.findings = all
	if all == nil {
		w.findings = opts.check(s)
	}
	w.origFindings = w.findings
	return w, nil
}

// findingKey identifies a finding across edits: by its message and part,
// or by its location when it names neither (export files shift line numbers
// when a record above changes, so locations are not used otherwise).
func findingKey(f scan.Finding) string {
	k := f.Code + "|" + f.MessageID + "|" + f.PartID
	if f.MessageID == "" && f.PartID == "" {
		k += "|" + f.Location.Path + "|" + f.Location.Table + "|" + fmt.Sprint(f.Location.RowID)
	}
	return k
}

// sameFinding reports whether a and b have the same findingKey.
func sameFinding(a, b scan.Finding) bool {
	if a.Code != b.Code || a.MessageID != b.MessageID || a.PartID != b.PartID {
		return false
	}
	if a.MessageID != "" || a.PartID != "" {
		return true
	}
	return a.Location.Path == b.Location.Path && a.Location.Table == b.Location.Table && a.Location.RowID == b.Location.RowID
}

func present(f scan.Finding, fs []scan.Finding) bool {
	for _, g := range fs {
		if sameFinding(f, g) {
			return true
		}
	}
	return false
}

// newFindings returns findings of after that were not in before.
func newFindings(before, after []scan.Finding) []scan.Finding {
	seen := map[string]bool{}
	for _, f := range before {
		seen[findingKey(f)] = true
	}
	var out []scan.Finding
	for _, f := range after {
		if !seen[findingKey(f)] {
			out = append(out, f)
		}
	}
	return out
}

func (w *work) stepFor(f scan.Finding) step {
	st := step{f: f, gone: func(_ *store.Session, fs []scan.Finding) bool { return !present(f, fs) }}
	if f.Code == scan.SF503 {
		// The session check does not measure rows: the part is the evidence.
		st.gone = func(s *store.Session, _ []scan.Finding) bool {
			return !present(f, scan.OversizedParts(s, w.opts.validation()))
		}
	}
	if isPreflight(f.Code) && f.ErrorType != "" {
		return w.findingErrorStep(f)
	}
	if f.Severity == scan.Info {
		// Info findings are about records OpenCode never sends (an errored
		// attempt, tools on it) or facts worth knowing; the failed attempt
		// itself is left alone (rules.md, error-driven recovery).
		st.why = "info only: nothing reaches the provider from here, so nothing is changed"
		return st
	}
	if f.Fix == "" && opencode.ErrorType(f.ErrorType).NotRepairedYet() {
		// An image over a limit (but a user's pasted one, shrunk) or a
		// history over the context window: found, but no repair exists
		// yet.
		st.why = opencode.NotRepairedYetNote
		return st
	}
	if f.Code == scan.SF203 && f.MessageID == "" && f.PartID == "" && f.Fix == "" {
		st.why = "sessfix cannot rebuild the session record with confidence (the finding says why) and does not move a whole session; restore the session record from a backup, or `opencode import` an export of it"
		return st
	}
	if r := scan.Lookup(f.Code); f.Fix == "" && r != nil && r.Fixable {
		// The rule has repairs, but reported this finding without one
		// (an entry it cannot back up, a session that does not load).
		st.why = "sessfix has no safe repair for it"
		return st
	}
	st.strats = ruleStrats(f)
	if len(st.strats) == 0 {
		st.why = "report only: sessfix does not change the store for this rule"
	}
	return st
}

// chosen filters strategies to the one the user picked for the code.
//
// A preflight finding that stands for a record rule's defect (FixedBy, after
// the dedupe) takes the strategy given under either code, so
// `--strategy SF103=strip` still applies when the defect is reported as
// SF153.
func (w *work) chosen(code, fixedBy string, list []strat) ([]strat, string) {
	name, ok := w.opts.Strategies[strings.ToUpper(code)]
	for _, c := range strings.Split(fixedBy, ",") {
		if ok {
			break
		}
		name, ok = w.opts.Strategies[strings.ToUpper(strings.TrimSpace(c))]
	}
	if !ok {
		if isPreflight(code) {
			name, ok = w.opts.Strategies[scan.SF302]
		}
		if !ok {
			var out []strat
			for _, s := range list {
				if !s.OnlyOnRequest {
					out = append(out, s)
				}
			}
			return out, ""
		}
	}
	for _, s := range list {
		if s.Name == name {
			return []strat{s}, name
		}
	}
	return nil, name
}

// run decides every step, in order, as if each repair were checked on its
// own on the session with every earlier one applied; joint verification
// (joint.go) checks independent repairs together to get there with a few
// checks of the session instead of one per repair. Then it merges the
// accepted edits into one change set and validates that against the
// original session.
func (w *work) run(steps []step) (*SessionPlan, error) {
	if !w.opts.oneAtATime {
		plan, err := w.decide(steps, w.joint)
		if err == nil {
			return plan, nil
		}
		// Joint verification disagrees with the full check of its
		// result: decide again one repair at a time, from the start.
		jointFailed(w.orig.ID, err)
		w.s, w.findings, w.coup = w.orig, w.origFindings, nil
	}
	return w.decide(steps, w.oneByOne)
}

// jointFailed is told when joint verification fails a session (tests).
var jointFailed = func(sessionID string, err error) {}

// decide runs the steps through how (joint or oneByOne) and validates the
// merged result.
func (w *work) decide(steps []step, how func([]stepRun) error) (*SessionPlan, error) {
	rs := make([]stepRun, len(steps))
	for i := range steps {
		rs[i].step = steps[i]
	}
	if err := how(rs); err != nil {
		return nil, err
	}
	plan := &SessionPlan{Store: w.orig.Store, SessionID: w.orig.ID}
	var all []store.Edit
	for i := range rs {
		r := &rs[i]
		if r.note != "" && !slices.Contains(plan.Notes, r.note) {
			plan.Notes = append(plan.Notes, r.note)
		}
		switch {
		case r.fixed != nil:
			plan.Fixed = append(plan.Fixed, *r.fixed)
		case r.unfixed != nil:
			plan.Unfixed = append(plan.Unfixed, *r.unfixed)
		}
		all = append(all, r.edits...)
	}
	edits, skipped := collapse(all)
	plan.Skipped = skipped
	plan.Changes = &store.ChangeSet{Store: w.orig.Store, SessionID: w.orig.ID, Edits: edits}
	if len(edits) > 0 {
		final, err := ApplyInMemory(w.orig, plan.Changes)
		if err != nil {
			return nil, fmt.Errorf("session %s: the merged plan does not apply: %w", w.orig.ID, err)
		}
		// The working session holds the same edits, applied one step
		// at a time, and findings are its check: unless collapsing
		// changed a record, that check is this one.
		got := w.findings
		if !sameRecords(final, w.s) {
			got = w.opts.check(final)
		}
		if nf := newFindings(w.findings, got); len(nf) > 0 {
			return nil, fmt.Errorf("session %s: the merged plan causes %s (%s); nothing will be written", w.orig.ID, nf[0].Code, nf[0].Message)
		}
		if nf := newFindings(got, w.findings); len(nf) > 0 {
			return nil, fmt.Errorf("session %s: the merged plan leaves %s (%s); nothing will be written", w.orig.ID, nf[0].Code, nf[0].Message)
		}
	}
	return plan, nil
}

// stepRun is one step on its way through run.
type stepRun struct {
	step
	// entered is set once the step was reached: its notes and reasons to
	// do nothing looked at, the strategies to try chosen (list, name).
	entered bool
	list    []strat
	name    string
	// next is the strategy in list to try next; reasons say why the ones
	// before it were not taken.
	next    int
	reasons []string
	// alone asks for the next strategy to be checked on its own (joint.go).
	alone bool
	// resolved is set once the step is decided: fixed or unfixed (or
	// neither, for a step with nothing to do), with its edits.
	resolved bool
	fixed    *Repair
	unfixed  *Unfixed
	edits    []store.Edit
}

// enter reaches a step on the working session: it resolves the step when
// there is nothing to try (nothing to do, a reason to leave it alone, an
// earlier repair fixed it, no strategy applies) and otherwise chooses its
// strategies. It reports whether strategies are left to try.
func (w *work) enter(r *stepRun) bool {
	if r.entered {
		return !r.resolved
	}
	r.entered = true
	switch {
	case r.done:
		r.resolved = true
	case r.why != "":
		r.leave(r.why)
	case r.gone(w.s, w.findings):
		// An earlier repair in this plan fixed it too.
		r.fixed, r.resolved = &Repair{Finding: r.f}, true
	default:
		r.list, r.name = w.chosen(r.f.Code, r.f.FixedBy, r.strats)
		if len(r.list) == 0 {
			reason := "no strategy applies"
			if r.leftWhy != "" {
				reason = r.leftWhy
			}
			if r.name != "" {
				reason = fmt.Sprintf("strategy %q does not apply to this finding", r.name)
			}
			r.leave(reason)
		}
	}
	return !r.resolved
}

// leave resolves the step as unfixed.
func (r *stepRun) leave(reason string) {
	r.unfixed, r.resolved = &Unfixed{r.f, reason}, true
}

// giveUp resolves a step whose strategies all failed.
func (r *stepRun) giveUp() {
	r.leave("not fixed: " + strings.Join(r.reasons, "; "))
}

// editsOf plans strategy sg of the step on the working session; false (with
// the reason noted) when it does not apply, fails, or changes nothing.
func (w *work) editsOf(r *stepRun, sg strat) ([]store.Edit, bool) {
	eds, err := sg.plan(w)
	if errors.Is(err, errNotApplicable) {
		r.reasons = append(r.reasons, sg.Name+" does not apply")
		return nil, false
	}
	if err == nil && len(eds) == 0 {
		err = errors.New("it changes nothing")
	}
	if err != nil {
		r.reasons = append(r.reasons, sg.Name+": "+err.Error())
		return nil, false
	}
	return eds, true
}

// verdict says why a strategy's result is not accepted ("" when it is):
// the finding is still there, or it brought new findings (added: the
// findings of the result that were not there before).
func verdict(r *stepRun, sg strat, next *store.Session, after, added []scan.Finding) string {
	if !r.gone(next, after) {
		return sg.Name + " leaves it in place"
	}
	if len(added) > 0 {
		return fmt.Sprintf("%s would cause %s (%s)", sg.Name, added[0].Code, added[0].Message)
	}
	return ""
}

// accept resolves the step as fixed by sg's edits.
func (r *stepRun) accept(sg strat, eds []store.Edit) {
	for i := range eds {
		eds[i].Rule = r.f.Code
	}
	r.edits = eds
	r.fixed = &Repair{Finding: r.f, Strategy: sg.Name, Mutations: madeBy(sg.Strategy, eds), Edits: len(eds)}
	r.resolved = true
}

// oneByOne decides every step on its own, in order.
func (w *work) oneByOne(rs []stepRun) error {
	for i := range rs {
		w.alone(&rs[i])
	}
	return nil
}

// alone decides a step by checking each of its remaining strategies on its
// own: the strategy's edits applied to the working session, every rule run
// on the result. The first strategy whose result no longer shows the
// finding and shows nothing new is taken.
func (w *work) alone(r *stepRun) {
	if !w.enter(r) {
		return
	}
	for r.next < len(r.list) {
		sg := r.list[r.next]
		r.next++
		eds, ok := w.editsOf(r, sg)
		if !ok {
			continue
		}
		next, err := ApplyInMemory(w.s, &store.ChangeSet{Edits: eds})
		if err != nil {
			r.reasons = append(r.reasons, sg.Name+": "+err.Error())
			continue
		}
		after := w.opts.check(next)
		if why := verdict(r, sg, next, after, newFindings(w.findings, after)); why != "" {
			r.reasons = append(r.reasons, why)
			continue
		}
		r.accept(sg, eds)
		w.s, w.findings, w.coup = next, after, nil
		return
	}
	r.giveUp()
}

// collapse merges edits of the same record into one, in order: later
// updates replace the body; a re-key keeps the original Before; a delete or
// quarantine after updates wins (the updates are reported as skipped); an
// add followed by a delete vanishes; an edit of a part whose message an
// earlier edit removes is dropped (the message took it along).
func collapse(in []store.Edit) ([]store.Edit, []Skipped) {
	// A record is its kind, id and location: two parts of different
	// messages may share an id (SF211) and are still two records.
	type key struct {
		k   store.Kind
		id  string
		loc store.Location
	}
	var out []*store.Edit
	idx := map[key]int{}
	var skipped []Skipped
	removed := map[string]string{} // message id → the rule that removes it
	for _, e := range in {
		e := e
		k := key{e.Kind, e.ID, e.Loc}
		j, ok := idx[k]
		if by, gone := removed[e.MessageID]; gone && e.Kind == store.KindPart && e.MessageID != "" && e.Op != store.OpAdd {
			// Its message's removal, earlier in the plan, took it along.
			skipped = append(skipped, Skipped{e, "removed with its message by " + by})
			continue
		}
		if e.Kind == store.KindMessage && (e.Op == store.OpDelete || e.Op == store.OpQuarantine) {
			removed[e.ID] = e.Rule
		}
		if e.Op == store.OpAdd || !ok || out[j] == nil {
			out = append(out, &e)
			idx[k] = len(out) - 1
			if e.Op == store.OpRekey {
				idx[key{e.Kind, e.NewID, e.Loc}] = len(out) - 1
			}
			continue
		}
		prev := out[j]
		switch e.Op {
		case store.OpUpdate, store.OpRekey:
			prev.After = e.After
			if e.MessageID != "" {
				prev.MessageID = e.MessageID
			}
			if e.Op == store.OpRekey {
				if prev.Op == store.OpAdd {
					prev.ID = e.NewID
				} else {
					prev.Op, prev.NewID = store.OpRekey, e.NewID
				}
				idx[key{e.Kind, e.NewID, e.Loc}] = j
			}
			prev.Rule = joinUnique(prev.Rule, e.Rule)
			prev.Mutation = joinUnique(prev.Mutation, e.Mutation)
			prev.Reason = joinUnique(prev.Reason, e.Reason)
		case store.OpDelete, store.OpQuarantine:
			if prev.Op == store.OpAdd {
				skipped = append(skipped, Skipped{*prev, "added and removed again by the same plan"})
				out[j] = nil
				continue
			}
			skipped = append(skipped, Skipped{*prev, "superseded: the record is " + string(e.Op) + "d by " + e.Rule})
			d := e
			d.Before, d.Loc, d.ID = prev.Before, prev.Loc, prev.ID
			d.Rule = joinUnique(prev.Rule, e.Rule)
			out[j] = &d
		}
	}
	var res []store.Edit
	for _, e := range out {
		if e != nil {
			res = append(res, *e)
		}
	}
	return res, skipped
}

func joinUnique(a, b string) string {
	if a == "" {
		return b
	}
	for _, x := range strings.Split(a, ",") {
		if x == b {
			return a
		}
	}
	if b == "" {
		return a
	}
	return a + "," + b
}

// Targets of a finding in the working session.

func (w *work) message(f scan.Finding) (*store.Message, error) {
	if f.MessageID == "" {
		return nil, fmt.Errorf("the finding names no message")
	}
	if m, _ := w.lookup(f.MessageID, ""); m != nil {
		return m, nil
	}
	return nil, fmt.Errorf("message %s no longer exists", f.MessageID)
}

func (w *work) part(f scan.Finding) (*store.Message, *store.Part, error) {
	if f.PartID == "" {
		return nil, nil, fmt.Errorf("the finding names no part")
	}
	m, p := w.lookup(f.MessageID, f.PartID)
	if p == nil {
		return nil, nil, fmt.Errorf("part %s no longer exists", f.PartID)
	}
	return m, p, nil
}

// record is the finding's part, or its message (p nil) when it names no
// part.
func (w *work) record(f scan.Finding) (*store.Message, *store.Part, error) {
	if f.PartID != "" {
		return w.part(f)
	}
	m, err := w.message(f)
	return m, nil, err
}

// lookup finds a message (by messageID) or a part and its message (by
// partID: in the message messageID names first, as a part id may be used
// under two messages (SF211), then anywhere) in the working session, the
// first one as Session.Message and findPart do. Once the same session has
// been asked a few times it answers from an index (joint verification plans
// many repairs on one session).
func (w *work) lookup(messageID, partID string) (*store.Message, *store.Part) {
	x := &w.index
	if x.s != w.s {
		*x = sessionIndex{s: w.s}
	}
	if x.asked++; x.asked == 8 {
		x.msgs, x.parts = map[string]*store.Message{}, map[string][2]int{}
		for i, m := range w.s.Messages {
			if _, dup := x.msgs[m.ID]; !dup {
				x.msgs[m.ID] = m
			}
			for j, p := range m.Parts {
				if _, dup := x.parts[p.ID]; !dup { // the first, as findPart
					x.parts[p.ID] = [2]int{i, j}
				}
			}
		}
	}
	var m *store.Message
	if x.msgs != nil {
		m = x.msgs[messageID]
	} else {
		m = w.s.Message(messageID)
	}
	if partID == "" {
		return m, nil
	}
	if m != nil {
		for _, p := range m.Parts {
			if p.ID == partID {
				return m, p
			}
		}
	}
	if x.parts == nil {
		return findPart(w.s, partID)
	}
	if at, ok := x.parts[partID]; ok {
		m := w.s.Messages[at[0]]
		return m, m.Parts[at[1]]
	}
	return nil, nil
}

// sessionIndex indexes the messages and parts of a session (parts by the
// index of their message and their own).
type sessionIndex struct {
	s     *store.Session
	asked int
	msgs  map[string]*store.Message
	parts map[string][2]int
}

// quarantine moves an unreadable record, an orphan part, or a message whose
// session record is missing (with its parts) into the backup area.
func (w *work) quarantine(f scan.Finding) ([]store.Edit, error) {
	s := w.s
	for _, b := range s.Broken {
		if (f.Location.Path != "" && b.Loc == f.Location) || (b.ID != "" && (b.ID == f.PartID || (f.PartID == "" && b.ID == f.MessageID))) {
			if b.Loc.Path == s.Store.Path && b.Kind == store.KindSession {
				return nil, fmt.Errorf("the session could not be loaded as a whole (%v); nothing to move", b.Err)
			}
			out, err := quarantine(s, b, f.MessageID)
			if b.Kind == store.KindSession && err == nil {
				out = append(out, w.rebuildAfterQuarantine(b)...)
			}
			return out, err
		}
	}
	for _, o := range s.Orphans {
		if o.ID == f.PartID {
			return quarantine(s, &o.Record, o.MessageID)
		}
	}
	if f.PartID == "" && s.InfoMissing {
		if m := s.Message(f.MessageID); m != nil {
			out, _ := quarantine(s, &m.Record, "")
			for _, p := range m.Parts {
				more, _ := quarantine(s, &p.Record, m.ID)
				out = append(out, more...)
			}
			return out, nil
		}
	}
	return nil, errNotApplicable
}

// rewriteIDs sets body ids that disagree with the record's path or row to the
// authoritative ones.
func (w *work) rewriteIDs(f scan.Finding) ([]store.Edit, error) {
	set := func(raw []byte, want map[string]string, order []string) ([]byte, bool, error) {
		changed := false
		for _, k := range order {
			v := gjsonString(raw, k)
			if v == nil || *v == want[k] {
				continue
			}
			var err error
			raw, err = setJSON(raw, want[k], k)
			if err != nil {
				return nil, false, err
			}
			changed = true
		}
		return raw, changed, nil
	}
	if f.PartID != "" {
		m, p := findPart(w.s, f.PartID)
		if p == nil {
			return nil, errNotApplicable
		}
		after, changed, err := set(p.Raw, map[string]string{"id": p.ID, "sessionID": m.SessionID, "messageID": m.ID}, []string{"id", "sessionID", "messageID"})
		if err != nil || !changed {
			return nil, orNA(err)
		}
		ed := partEdit(store.OpUpdate, m, p, "rewriteBodyIDs", "body ids set to the ones its location gives")
		ed.After = after
		return []store.Edit{ed}, nil
	}
	m := w.s.Message(f.MessageID)
	if m == nil {
		return nil, errNotApplicable
	}
	after, changed, err := set(m.Raw, map[string]string{"id": m.ID, "sessionID": m.SessionID}, []string{"id", "sessionID"})
	if err != nil || !changed {
		return nil, orNA(err)
	}
	ed := messageEdit(store.OpUpdate, m, "rewriteBodyIDs", "body ids set to the ones its location gives")
	ed.After = after
	return []store.Edit{ed}, nil
}

func orNA(err error) error {
	if err != nil {
		return err
	}
	return errNotApplicable
}
