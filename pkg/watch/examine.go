package watch

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/sessfix/sessfix/pkg/fix"
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

// Unfinished reports whether an assistant message of the session has
// neither time.completed nor an error: OpenCode is writing it, or was
// killed while it did.
func Unfinished(s *store.Session) bool {
	for _, m := range s.Messages {
		if m.Role == "assistant" && !scan.IsCompleted(m) && scan.ErrorName(m) == "" {
			return true
		}
	}
	return false
}

func (w *Watcher) scanOptions(settle time.Duration) *scan.Options {
	so := w.opts.Scan
	so.Sessions = nil
	so.Settle = settle
	so.Now = w.clock.Now
	so.Progress = nil
	return &so
}

func (w *Watcher) later(ss *storeState, id string, at time.Time, lastEvent time.Time) {
	k := key{w.storeIndex(ss), id}
	if p := w.pending[k]; p != nil {
		return // a newer event already scheduled it
	}
	w.pending[k] = &pending{due: at, lastEvent: lastEvent}
}

func (w *Watcher) sessionEvent(ss *storeState, kind Kind, s *store.Session, ref store.SessionRef) Event {
	info := ss.info
	e := Event{Kind: kind, Store: &info, Session: ref.ID, Title: ref.Title}
	if s != nil && s.Title != "" {
		e.Title = s.Title
	}
	return e
}

// examine looks at one session whose settle window has passed and repairs
// it when it is safe to.
func (w *Watcher) examine(ctx context.Context, ss *storeState, id string, lastEvent time.Time) {
	ref, ok := ss.refs[id]
	if !ok {
		if err := w.list(ctx, ss); err != nil {
			w.warn(ss, "cannot list the sessions again", err)
			return
		}
		if ref, ok = ss.refs[id]; !ok {
			// The session is gone (deleted, or its first record has not
			// landed yet; its next event brings it back).
			delete(ss.fps, id)
			delete(ss.busy, id)
			return
		}
	}
	s, err := ss.st.Load(ctx, ref)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		if lerr := w.list(ctx, ss); lerr == nil {
			if _, still := ss.refs[id]; !still {
				delete(ss.fps, id) // deleted while we looked: nothing to repair
				delete(ss.busy, id)
				return
			}
		}
		e := w.sessionEvent(ss, Failed, nil, ref)
		e.Message, e.Error = "the session cannot be loaded", err.Error()
		w.report(e)
		return
	}
	ss.learn(s)
	now := w.clock.Now()
	last := s.LastModified()
	if last.After(now.Add(w.opts.Settle)) {
		last = time.Time{} // file times in the future (a restore, a clock change) say nothing
	}
	if lastEvent.After(last) {
		last = lastEvent
	}
	if !last.IsZero() && now.Sub(last) < w.opts.Settle {
		// Written again since the event: wait until it is quiet.
		w.later(ss, id, last.Add(w.opts.Settle), lastEvent)
		return
	}
	fp := Fingerprint(s)
	if ss.fps[id] == fp {
		return
	}
	if Unfinished(s) && (last.IsZero() || now.Sub(last) < w.opts.Abandon) && w.inUse(ss.info) {
		// OpenCode may be running a long tool in this session.
		if ss.busy[id] != fp {
			ss.busy[id] = fp
			if codes := findingCodes(scan.CheckSession(s, w.scanOptions(w.opts.Settle))); len(codes) > 0 {
				e := w.sessionEvent(ss, SkippedBusy, s, ref)
				e.Rules = codes
				e.Message = fmt.Sprintf("an assistant message is unfinished and the store is open in another process; retrying when it has been quiet for %s", w.opts.Abandon)
				w.report(e)
			}
		}
		// Look again when the abandon window has passed, or earlier to see
		// whether the other process is gone (a killed OpenCode writes
		// nothing more, so no event would come).
		at := last.Add(w.opts.Abandon)
		if last.IsZero() {
			at = now.Add(w.opts.Abandon)
		}
		if re := now.Add(w.opts.BusyRecheck); re.Before(at) {
			at = re
		}
		w.later(ss, id, at, lastEvent)
		return
	}
	delete(ss.busy, id)

	sopts := w.scanOptions(w.opts.Settle)
	findings := scan.CheckSession(s, sopts)
	if w.opts.Suppressed != nil {
		kept := findings[:0:0]
		for _, f := range findings {
			if !w.opts.Suppressed(f) {
				kept = append(kept, f)
			}
		}
		findings = kept
	}
	fopts := w.opts.Fix
	fopts.Now = w.clock.Now
	fopts.Scan = sopts
	plan, err := fix.Plan(s, findings, fopts)
	if err != nil {
		ss.fps[id] = fp
		e := w.sessionEvent(ss, Failed, s, ref)
		e.Message, e.Error = "the repair cannot be planned", err.Error()
		w.report(e)
		return
	}
	if plan.Empty() {
		ss.fps[id] = fp
		if left := unfixedCodes(plan); len(left) > 0 {
			e := w.sessionEvent(ss, Unfixed, s, ref)
			e.Rules = left
			e.Message = "findings remain that sessfix does not repair; see `sessfix scan`"
			w.report(e)
			return
		}
		e := w.sessionEvent(ss, Checked, s, ref)
		e.Message = "nothing to repair"
		w.report(e)
		return
	}
	rules := planRules(plan)
	if w.opts.DryRun {
		ss.fps[id] = fp
		e := w.sessionEvent(ss, WouldRepair, s, ref)
		e.Rules, e.Edits = rules, len(plan.Changes.Edits)
		e.Message = "dry run: nothing written"
		w.report(e)
		return
	}
	if ctx.Err() != nil {
		return // stopping: abandon before anything is written
	}
	wopts := w.opts.Write
	wopts.Scan = sopts
	if wopts.Backup.Now == nil {
		wopts.Backup.Now = w.clock.Now
	}
	run, err := fix.Write(ctx, ss.st, []fix.Planned{{Ref: ref, Plan: plan}}, wopts)
	switch {
	case err == nil:
	case run == "" && errors.Is(err, store.ErrLocked):
		e := w.sessionEvent(ss, Waiting, s, ref)
		e.Message, e.Error = "the store is busy (another sessfix, or OpenCode holding the database); retrying", err.Error()
		w.report(e)
		w.later(ss, id, w.clock.Now().Add(w.opts.LockRetry), lastEvent)
		return
	case run == "" && errors.Is(err, store.ErrChanged):
		e := w.sessionEvent(ss, Waiting, s, ref)
		e.Message, e.Error = "the session changed while the repair was written; nothing written, retrying when it is quiet", err.Error()
		w.report(e)
		w.later(ss, id, w.clock.Now().Add(w.opts.Settle), lastEvent)
		return
	default:
		ss.fps[id] = fp // do not retry the same content in a loop
		e := w.sessionEvent(ss, Failed, s, ref)
		e.Rules, e.Backup = rules, run
		e.Message, e.Error = "the repair failed", err.Error()
		if run != "" {
			e.Message = "the repair failed; undo what was written with `sessfix undo " + run + "`"
			w.remember(context.WithoutCancel(ctx), ss, ref, fp)
		}
		w.report(e)
		return
	}
	w.remember(context.WithoutCancel(ctx), ss, ref, fp)
	e := w.sessionEvent(ss, Repaired, s, ref)
	e.Rules, e.Edits, e.Backup = rules, len(plan.Changes.Edits), run
	e.Message = "undo with `sessfix undo " + run + "`"
	w.report(e)
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
