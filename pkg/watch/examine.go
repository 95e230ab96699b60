package watch

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"sort"
	"time"

	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

// Fingerprint hashes what a session holds: the kind, id and exact bytes of
// every record, in load order. File times and time_updated are left out, so
// a session whose content is unchanged has the same fingerprint.
func Fingerprint(s *store.Session) string {
	h := sha256.New()
	var n [8]byte
	for r := range s.Records() {
		h.Write([]byte(r.Kind))
		h.Write([]byte{0})
		h.Write([]byte(r.ID))
		h.Write([]byte{0})
		binary.BigEndian.PutUint64(n[:], uint64(len(r.Raw)))
		h.Write(n[:])
		h.Write(r.Raw)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (w *Watcher) later(ss *storeState, id string, at time.Time, lastEvent time.Time) {
	k := key{w.storeIndex(ss), id}
	if p := w.pending[k]; p != nil {
		return // a newer event already scheduled it
	}
	w.pending[k] = &pending{due: at, lastEvent: lastEvent}
}

// event starts the report of what happened to a session.
func (w *Watcher) event(ss *storeState, kind Kind, o fix.Outcome) Event {
	e := Event{Kind: kind, Store: refOf(ss.info), Session: o.Ref.ID, Title: o.Title}
	if e.Title == "" {
		e.Title = o.Ref.Title
	}
	return e
}

// examine runs one session whose settle window has passed through the
// repair pipeline, one session at a time, and acts on the outcome. The
// pipeline asks admit before it checks the session.
func (w *Watcher) examine(ctx context.Context, ss *storeState, id string, lastEvent time.Time) {
	ref, ok := w.lookup(ctx, ss, id)
	if !ok {
		return
	}
	var fp string
	pipe := w.examination()
	pipe.Admit = func(t fix.Target, s *store.Session) bool {
		fp = Fingerprint(s)
		return w.admit(ss, t.Ref, s, fp, lastEvent, pipe.Scan)
	}
	run := pipe.Repair
	if w.opts.DryRun {
		run = pipe.Plan
	}
	_ = run(ctx, []fix.Target{{Store: ss.st, Ref: ref}}, func(o fix.Outcome) bool {
		w.settle(ctx, ss, o, fp, lastEvent)
		return true
	})
}

// examination is the pipeline of one examination: the watcher's, with
// OpenCode's environment read afresh (Options.OpenCode) for the rules, the
// plan and the re-check before the write alike.
func (w *Watcher) examination() fix.Pipeline {
	pipe := *w.pipe
	if w.opts.OpenCode != nil {
		so := *pipe.Scan
		so.OpenCode = w.opts.OpenCode()
		pipe.Scan, pipe.Fix.Scan, pipe.Write.Scan = &so, &so, &so
	}
	return pipe
}

// lookup finds a session's ref, listing the store again when the session
// is new. A session that is gone is forgotten.
func (w *Watcher) lookup(ctx context.Context, ss *storeState, id string) (store.SessionRef, bool) {
	if ref, ok := ss.refs[id]; ok {
		return ref, true
	}
	if err := w.list(ctx, ss); err != nil {
		w.warn(ss, "cannot list the sessions again", err)
		return store.SessionRef{}, false
	}
	ref, ok := ss.refs[id]
	if !ok {
		// The session is gone (deleted, or its first record has not landed
		// yet; its next event brings it back).
		w.forget(ss, id)
	}
	return ref, ok
}

func (w *Watcher) forget(ss *storeState, id string) {
	delete(ss.fps, id)
	delete(ss.busy, id)
}

// admit decides (decide) whether a loaded session is repaired now; when it
// is not, it schedules the next look and reports a busy session once per
// content.
func (w *Watcher) admit(ss *storeState, ref store.SessionRef, s *store.Session, fp string, lastEvent time.Time, so *scan.Options) bool {
	ss.learn(s)
	now := w.clock.Now()
	st := sessionState{
		lastChange: w.settlePolicy.LastChange(s, lastEvent, now),
		seen:       ss.fps[ref.ID] == fp,
		open:       opencode.OpenMessage(s) != nil,
		activity:   func() store.Activity { return w.activity(ss.info) },
	}
	d := decide(w.settlePolicy, st, now, w.opts.BusyRecheck)
	switch d.action {
	case wait, busy:
		if d.action == busy && ss.busy[ref.ID] != fp {
			ss.busy[ref.ID] = fp
			w.reportBusy(ss, ref, s, d.use, so)
		}
		w.later(ss, ref.ID, d.at, lastEvent)
		return false
	case skip:
		return false
	}
	delete(ss.busy, ref.ID)
	return true
}

// reportBusy says a session is left alone while it is in progress, and
// why. A session whose only findings are those of the turn OpenCode is
// writing (its open message, not finished yet, and what follows it) is
// what OpenCode does all day: that is said only with --verbose (Waiting).
// One with damage of its own is reported as SkippedBusy, with every rule
// that will be repaired once OpenCode is done with it (a message in
// progress is never a finding).
func (w *Watcher) reportBusy(ss *storeState, ref store.SessionRef, s *store.Session, u opencode.Use, so *scan.Options) {
	fs := scan.CheckSession(s, so.IgnoringUse())
	e := w.event(ss, SkippedBusy, fix.Outcome{Target: fix.Target{Ref: ref}, Title: s.Title})
	e.Message = u.Why + "; looking again later"
	if !outsideOpenTurn(s, fs) {
		e.Kind = Waiting
		w.report(e)
		return
	}
	e.Rules = findingCodes(fs)
	w.report(e)
}

// outsideOpenTurn reports whether a finding worth reporting (a warning or
// worse) concerns something other than the session's open turn: the newest
// assistant message while it has neither time.completed nor an error, and
// the messages after it.
func outsideOpenTurn(s *store.Session, fs []scan.Finding) bool {
	open := opencode.OpenMessage(s)
	turn := map[string]bool{}
	for i := len(s.Messages) - 1; open != nil && i >= 0; i-- {
		turn[s.Messages[i].ID] = true
		if s.Messages[i] == open {
			break
		}
	}
	for _, f := range fs {
		if f.Severity >= scan.Warning && (f.MessageID == "" || !turn[f.MessageID]) {
			return true
		}
	}
	return false
}

// settle acts on a session's outcome: report it, remember the content
// examined or written, and schedule a retry where one helps.
func (w *Watcher) settle(ctx context.Context, ss *storeState, o fix.Outcome, fp string, lastEvent time.Time) {
	id := o.Ref.ID
	switch {
	case o.Status == fix.Held:
	case o.Status == fix.Failed && o.Step == fix.StepLoad:
		w.loadFailed(ctx, ss, o)
	case o.Status == fix.Failed && o.Step == fix.StepPlan:
		ss.fps[id] = fp
		e := w.event(ss, Failed, o)
		e.Message, e.Error = "the repair cannot be planned", o.Err.Error()
		w.report(e)
	case o.Status == fix.Failed:
		w.writeFailed(ctx, ss, o, fp, lastEvent)
	case o.Status == fix.Applied:
		w.remember(context.WithoutCancel(ctx), ss, o.Ref, fp)
		e := w.event(ss, Repaired, o)
		e.Rules, e.Edits, e.Backup = planRules(o.Plan), len(o.Plan.Changes.Edits), o.Run
		e.Message = "undo with `sessfix undo " + o.Run + "`"
		w.report(e)
	case o.Changes(): // a dry run
		ss.fps[id] = fp
		e := w.event(ss, WouldRepair, o)
		e.Rules, e.Edits = planRules(o.Plan), len(o.Plan.Changes.Edits)
		e.Message = "dry run: nothing written"
		w.report(e)
	default:
		ss.fps[id] = fp
		if left := unfixedCodes(o.Plan); len(left) > 0 {
			e := w.event(ss, Unfixed, o)
			e.Rules = left
			e.Message = "findings remain that sessfix does not repair; see `sessfix scan`"
			w.report(e)
			return
		}
		e := w.event(ss, Checked, o)
		e.Message = "nothing to repair"
		w.report(e)
	}
}

// loadFailed reports a session that cannot be loaded, unless the watcher
// is stopping or the session was deleted while it looked.
func (w *Watcher) loadFailed(ctx context.Context, ss *storeState, o fix.Outcome) {
	if ctx.Err() != nil {
		return
	}
	if err := w.list(ctx, ss); err == nil {
		if _, still := ss.refs[o.Ref.ID]; !still {
			w.forget(ss, o.Ref.ID) // deleted while we looked: nothing to repair
			return
		}
	}
	e := w.event(ss, Failed, fix.Outcome{Target: o.Target})
	e.Message, e.Error = "the session cannot be loaded", o.Err.Error()
	w.report(e)
}

// writeFailed reports a repair that was not written, and retries it when
// the store was locked or the session changed meanwhile.
func (w *Watcher) writeFailed(ctx context.Context, ss *storeState, o fix.Outcome, fp string, lastEvent time.Time) {
	id := o.Ref.ID
	switch {
	case o.Run == "" && errors.Is(o.Err, store.ErrLocked):
		e := w.event(ss, Waiting, o)
		e.Message, e.Error = "the store is busy (another sessfix, or OpenCode holding the database); retrying", o.Err.Error()
		w.report(e)
		w.later(ss, id, w.clock.Now().Add(w.opts.LockRetry), lastEvent)
	case o.Run == "" && errors.Is(o.Err, store.ErrChanged):
		e := w.event(ss, Waiting, o)
		e.Message, e.Error = "the session changed while the repair was written; nothing written, retrying when it is quiet", o.Err.Error()
		w.report(e)
		w.later(ss, id, w.clock.Now().Add(w.retry()), lastEvent)
	default:
		ss.fps[id] = fp // do not retry the same content in a loop
		e := w.event(ss, Failed, o)
		e.Rules, e.Backup = planRules(o.Plan), o.Run
		e.Message, e.Error = "the repair failed", o.Err.Error()
		if o.Run != "" {
			e.Message = "the repair failed; undo what was written with `sessfix undo " + o.Run + "`"
			w.remember(context.WithoutCancel(ctx), ss, o.Ref, fp)
		}
		w.report(e)
	}
}

// remember records the fingerprint of what a repair left, so the events of
// its own writes find the session unchanged.
func (w *Watcher) remember(ctx context.Context, ss *storeState, ref store.SessionRef, fallback string) {
	s, err := ss.st.Load(ctx, ref)
	if err != nil {
		ss.fps[ref.ID] = fallback
		return
	}
	ss.fps[ref.ID] = Fingerprint(s)
}

func planRules(p *fix.SessionPlan) []string {
	var out []string
	for code := range p.EditsByRule() {
		if code != "" {
			out = append(out, code)
		}
	}
	sort.Strings(out)
	return out
}

func unfixedCodes(p *fix.SessionPlan) []string {
	seen := map[string]bool{}
	var out []string
	for _, u := range p.Unfixed {
		if u.Finding.Severity >= scan.Warning && !seen[u.Finding.Code] {
			seen[u.Finding.Code] = true
			out = append(out, u.Finding.Code)
		}
	}
	sort.Strings(out)
	return out
}

func findingCodes(fs []scan.Finding) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range fs {
		if f.Severity >= scan.Warning && !seen[f.Code] {
			seen[f.Code] = true
			out = append(out, f.Code)
		}
	}
	sort.Strings(out)
	return out
}
