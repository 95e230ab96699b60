package fix

import (
	"fmt"
	"slices"

	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

// Joint verification.
//
// Deciding every step alone checks the whole session once per strategy
// tried: planning costs the number of findings times a check. joint reaches
// the same decisions with a few checks, relying on scan.Coupling's
// contract: the findings about a message depend only on the records of its
// group of coupled messages and on the session-wide facts the coupling
// compares.
//
// A round takes the undecided steps in order and gives each its next
// strategy, planned on the working session, as long as the step names a
// message or a part record (its unit: the message's group, or the record),
// no earlier undecided step has the same unit, and the strategy is local:
// its edits stay inside the unit and change no message's order or whether
// it is sent (not exclude, close, prepend, a message re-key or removal).
// The round's edits are applied together and the session is checked once.
// When the result has the same coupling and no finding outside the round's
// units appeared or went away, the check of each unit is what a check of
// its repair alone would show; when moreover every repair passes there (its
// finding gone, nothing new on its unit), all are accepted.
//
// Otherwise the round accepts nothing. A repair that fails is checked
// alone: a joint check never rejects a repair, since what fails it may be
// another repair of the round. When the check cannot stand for single ones
// (the coupling changed, a finding outside appeared or went away), the
// round is split in half, down to a repair checked alone.
//
// A step whose unit waits for an earlier step is decided after it, on the
// session with that step's repair: a repair that clears another finding of
// its group is credited exactly as one at a time credits it. Repairs of
// different groups cannot clear each other's findings without changing the
// coupling.
//
// Checking a step alone (a session-wide finding, a stored provider error, a
// strategy that is not local, a repair that failed a round) happens on the
// session with exactly the repairs of the steps before it: repairs of later
// steps accepted in earlier rounds are taken back and decided again after
// it.
//
// Whatever the rounds decide, run validates the merged change set against
// a full check of its result, and decides one at a time from the start when
// the two disagree.

// member is one step's strategy in a round.
type member struct {
	r    *stepRun
	unit string
	sg   strat
	eds  []store.Edit
}

// joint decides every step in rounds of joint checks.
func (w *work) joint(rs []stepRun) error {
	limit := len(rs)
	for {
		if i, ok := w.last(rs); ok {
			// One step left to check: checking it alone costs what a
			// round would. (Steps after it that exact takes back are
			// decided next.)
			if err := w.exact(rs, i); err != nil {
				return err
			}
			w.alone(&rs[i])
			continue
		}
		batch, cur, barrier := w.round(rs, limit)
		switch {
		case len(batch) > 0:
			switch {
			case w.verify(batch, cur):
				limit = len(rs)
			case len(batch) > 1:
				limit = len(batch) / 2
			default:
				batch[0].r.alone = true
			}
		case barrier >= 0:
			if err := w.exact(rs, barrier); err != nil {
				return err
			}
			w.alone(&rs[barrier])
			limit = len(rs)
		case slices.ContainsFunc(rs, func(r stepRun) bool { return !r.resolved }):
			// The round only decided steps that needed no check.
		default:
			return nil
		}
	}
}

// last decides the steps that need no check and reports the only step
// left that does, if there is one.
func (w *work) last(rs []stepRun) (int, bool) {
	left := -1
	for i := range rs {
		r := &rs[i]
		switch {
		case r.resolved:
		case r.done || r.why != "":
			w.enter(r)
		case left >= 0:
			return -1, false
		default:
			left = i
		}
	}
	return left, left >= 0
}

// round gathers up to limit steps to check together, each with the next
// strategy to try, and returns them with the working session with all their
// edits applied. When it meets a step that must be checked alone it stops
// there and returns the step's index as barrier (-1 otherwise); the step is
// checked once every step before it is decided.
func (w *work) round(rs []stepRun, limit int) (batch []member, cur *store.Session, barrier int) {
	barrier = -1
	waits := map[string]bool{} // units with a step in the round or still undecided
steps:
	for i := range rs {
		r := &rs[i]
		if r.resolved {
			continue
		}
		if r.done || r.why != "" {
			w.enter(r) // decided whatever the session holds
			continue
		}
		if r.f.Code == scan.SF302 || r.alone || r.f.MessageID == "" && r.f.PartID == "" {
			barrier = i
			break
		}
		coup := w.coupling()
		unit := unitOf(r.f, coup)
		if waits[unit] || !w.enter(r) {
			continue
		}
		for r.next < len(r.list) {
			sg := r.list[r.next]
			eds, ok := w.editsOf(r, sg)
			if !ok {
				r.next++
				continue
			}
			if !w.local(sg, eds, unit, coup) {
				barrier = i
				break steps
			}
			batch = append(batch, member{r: r, unit: unit, sg: sg, eds: eds})
			break
		}
		if r.next == len(r.list) {
			r.giveUp()
			continue
		}
		waits[unit] = true
		if len(batch) == limit {
			break
		}
	}
	if len(batch) == 0 {
		return nil, nil, barrier
	}
	var all []store.Edit
	for _, m := range batch {
		all = append(all, m.eds...)
	}
	cur, err := ApplyInMemory(w.s, &store.ChangeSet{Edits: all})
	if err == nil {
		return batch, cur, barrier
	}
	// Some strategy's edits do not apply: apply them one by one, and note
	// those that fail as one at a time does.
	cur = w.s
	kept := batch[:0]
	for _, m := range batch {
		next, err := ApplyInMemory(cur, &store.ChangeSet{Edits: m.eds})
		if err != nil {
			m.r.reasons = append(m.r.reasons, m.sg.Name+": "+err.Error())
			m.r.next++
			continue
		}
		cur, kept = next, append(kept, m)
	}
	return kept, cur, barrier
}

// verify checks a round's result once. When the check can stand for
// checks of each repair alone (the coupling is the same, no finding outside
// the round's units appeared or went away) and every repair passes (its
// finding gone, nothing new on its unit), it accepts them all. A repair
// that does not pass is marked to be checked alone: a joint check never
// rejects a repair, since what fails it may be another repair of the
// round. verify reports false, deciding nothing, when the check cannot
// stand for single ones.
func (w *work) verify(batch []member, cur *store.Session) bool {
	coup := w.coupling()
	after, curCoup := w.opts.checkCoupled(cur)
	if !curCoup.Same(coup) {
		return false
	}
	units := make(map[string]bool, len(batch))
	for _, m := range batch {
		units[m.unit] = true
	}
	if !sameOutside(w.findings, after, units, coup) {
		return false
	}
	added := map[string][]scan.Finding{}
	for _, f := range newFindings(w.findings, after) {
		u := unitOf(f, coup)
		added[u] = append(added[u], f)
	}
	failed := false
	for _, m := range batch {
		if verdict(m.r, m.sg, cur, after, added[m.unit]) != "" {
			m.r.alone, failed = true, true
		}
	}
	if failed {
		return true
	}
	for _, m := range batch {
		m.r.accept(m.sg, m.eds)
	}
	w.s, w.findings, w.coup = cur, after, curCoup
	return true
}

// exact makes the working session hold exactly the repairs of the steps
// before i, with findings from a check of it, for deciding step i alone:
// steps after i decided in earlier rounds are undone, to be decided again.
func (w *work) exact(rs []stepRun, i int) error {
	undo := false
	for j := i + 1; j < len(rs); j++ {
		if r := &rs[j]; r.entered && !r.done && r.why == "" {
			undo = undo || len(r.edits) > 0
			*r = stepRun{step: r.step}
		}
	}
	if !undo {
		return nil
	}
	var eds []store.Edit
	for j := range rs[:i] {
		eds = append(eds, rs[j].edits...)
	}
	s, err := ApplyInMemory(w.orig, &store.ChangeSet{Edits: eds})
	if err != nil {
		return fmt.Errorf("session %s: the repairs before step %d do not apply without the later ones: %w", w.orig.ID, i+1, err)
	}
	w.s, w.findings, w.coup = s, w.opts.check(s), nil
	return nil
}

// coupling returns the working session's coupling.
func (w *work) coupling() *scan.Coupling {
	switch {
	case w.coup != nil:
	case w.s == w.orig && w.origCoupling != nil:
		w.coup = w.origCoupling()
	default:
		w.coup = scan.SessionCoupling(w.s, w.opts.validation())
	}
	return w.coup
}

// unitOf names what a finding is about for joint verification: its
// message's group, or its part record when it names no message; "" when it
// names neither (a session-wide finding).
func unitOf(f scan.Finding, coup *scan.Coupling) string {
	switch {
	case f.MessageID != "":
		return "message " + coup.Group(f.MessageID)
	case f.PartID != "":
		return "part " + f.PartID
	}
	return ""
}

// local reports whether a strategy's edits can be checked with other
// units' repairs: each edit changes a part of the unit, a loaded message's
// body (its ids), or removes an unreadable or orphaned record of the unit;
// and the strategy is not one that changes whether a message is sent or
// reads other messages (exclude, close, prepend).
func (w *work) local(sg strat, eds []store.Edit, unit string, coup *scan.Coupling) bool {
	switch sg.Name {
	case stExclude.Name, stClose.Name, stPrepend.Name:
		return false
	}
	for _, e := range eds {
		var u string
		switch {
		case e.Kind == store.KindPart && e.MessageID != "":
			u = "message " + coup.Group(e.MessageID)
		case e.Kind == store.KindPart:
			u = "part " + e.ID
		case e.Kind == store.KindMessage && (e.Op == store.OpUpdate || msgIndex(w.s, e.ID) < 0 && e.Op == store.OpQuarantine):
			u = "message " + coup.Group(e.ID)
		default:
			return false
		}
		if u != unit {
			return false
		}
	}
	return true
}

// sameOutside reports whether the findings outside units are the same
// before and after.
func sameOutside(before, after []scan.Finding, units map[string]bool, coup *scan.Coupling) bool {
	n := map[string]int{}
	for _, f := range before {
		if !units[unitOf(f, coup)] {
			n[findingKey(f)]++
		}
	}
	for _, f := range after {
		if !units[unitOf(f, coup)] {
			n[findingKey(f)]--
		}
	}
	for _, c := range n {
		if c != 0 {
			return false
		}
	}
	return true
}

// sameRecords reports whether two sessions hold the same records in the
// same order (what the rules read), comparing messages that are not shared.
func sameRecords(a, b *store.Session) bool {
	if a == b {
		return true
	}
	if a.ID != b.ID || a.InfoMissing != b.InfoMissing || !sameRecord(a.Info, b.Info) ||
		len(a.Messages) != len(b.Messages) || len(a.Broken) != len(b.Broken) || len(a.Orphans) != len(b.Orphans) {
		return false
	}
	for i, m := range a.Messages {
		n := b.Messages[i]
		if m == n {
			continue
		}
		if m.SessionID != n.SessionID || m.Role != n.Role || m.Created != n.Created ||
			!sameRecord(&m.Record, &n.Record) || len(m.Parts) != len(n.Parts) {
			return false
		}
		for j, p := range m.Parts {
			if !samePart(p, n.Parts[j]) {
				return false
			}
		}
	}
	for i, r := range a.Broken {
		if !sameRecord(r, b.Broken[i]) {
			return false
		}
	}
	for i, p := range a.Orphans {
		if !samePart(p, b.Orphans[i]) {
			return false
		}
	}
	return true
}

func samePart(p, q *store.Part) bool {
	return p == q || p.MessageID == q.MessageID && p.SessionID == q.SessionID && p.Type == q.Type && sameRecord(&p.Record, &q.Record)
}

func sameRecord(r, q *store.Record) bool {
	if r == nil || q == nil {
		return r == q
	}
	return r == q || r.Kind == q.Kind && r.ID == q.ID && string(r.Raw) == string(q.Raw) && r.Loc == q.Loc &&
		r.Modified.Equal(q.Modified) && errText(r.Err) == errText(q.Err)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
