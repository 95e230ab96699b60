package fix

import (
	"fmt"
	"strings"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// errorStrats are the strategies error-driven recovery tries for a defect on
// the target message, in order; until is the failed attempt ("" for none),
// before which a session-wide defect is repaired wherever it shows.
func errorStrats(d opencode.Defect, target, until, reason string) []strat {
	if d.InRecords() {
		return recordStrats(d, target, until, reason)
	}
	f := scan.Finding{Code: scan.SF302, MessageID: target, Message: reason}
	bind := func(st Strategy) strat { return strat{st, rulePlanFunc(f, st)} }
	abortAll := strat{stAbort, func(w *work) ([]store.Edit, error) {
		m, err := w.message(f)
		if err != nil {
			return nil, err
		}
		var out []store.Edit
		for _, p := range m.Parts {
			eds, err := markToolAborted(w.s, m, p, w.env)
			if err != nil {
				return nil, err
			}
			out = append(out, eds...)
		}
		return out, nil
	}}
	stripUnlessFinal := strat{stStrip, func(w *work) ([]store.Edit, error) {
		m, err := w.message(f)
		if err != nil {
			return nil, err
		}
		if finalToolLoop(w.s, m) {
			// Without its thinking the final tool-loop message is rejected.
			return nil, errNotApplicable
		}
		return stripThinkingParts(w.s, m, nil)
	}}
	switch d {
	case opencode.DefectOrderFinal:
		return []strat{bind(stMove), bind(stExclude), bind(stPrepend)}
	case opencode.DefectOrderFirst:
		return []strat{bind(stMove), stripUnlessFinal, bind(stExclude), bind(stPrepend)}
	case opencode.DefectFinalThinking:
		return []strat{bind(stInject), bind(stExclude)}
	case opencode.DefectDisabled:
		return []strat{bind(stStrip), bind(stExclude)}
	case opencode.DefectToolMissing:
		return []strat{abortAll, bind(stExclude)}
	case opencode.DefectEmpty:
		return []strat{bind(stReplace), bind(stInject), bind(stExclude)}
	case opencode.DefectSignature:
		return []strat{stripUnlessFinal, bind(stExclude)}
	}
	return nil
}

// finalToolLoop reports whether m is the last assistant message OpenCode
// sends and it called tools: the message Anthropic requires to start with
// signed thinking when thinking is on.
func finalToolLoop(s *store.Session, m *store.Message) bool {
	list := ProviderMessages(s, MapOptions{})
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].Role != "assistant" {
			continue
		}
		if list[i].Sources[len(list[i].Sources)-1] != m.ID {
			return false
		}
		for _, p := range m.Parts {
			if p.Type == "tool" {
				return true
			}
		}
		return false
	}
	return false
}

// errorSteps build the repair of what a provider error points at. failed is
// the stored failed attempt that carries it (nil for a pasted error the
// session does not store): the history is rebuilt as it was before it.
//
// An error with a messages.N index is one step: the stored message N maps
// to, repaired by the error's defect. An error that names no message is
// mapped through the preflight to the findings that produce it
// (scan.ErrorCauses): a step for each (unless the plan already has one),
// then the error's own step, which holds once none is left.
func (w *work) errorSteps(f scan.Finding, text string, failed *store.Message) []step {
	st := step{f: f}
	r := opencode.ReadError(w.orig, text, failed)
	if f.ErrorType == "" {
		st.f.ErrorType = string(r.Type)
	}
	if st.f.Index == "" {
		st.f.Index = r.Index
	}
	others := func(fs []scan.Finding) []scan.Finding {
		out := make([]scan.Finding, 0, len(fs))
		for _, g := range fs {
			if g.Code != scan.SF302 {
				out = append(out, g)
			}
		}
		return out
	}
	resolved := func(s *store.Session, fs []scan.Finding) bool {
		_, ok := scan.Resolved(r, s, others(fs), w.opts.validation().OpenCode)
		return ok
	}
	if r.Defect == opencode.DefectNone {
		// A pasted image over a limit: repaired through the preflight's
		// findings of it, which shrinkImage repairs.
		if causes := scan.MediaCauses(others(w.findings), text, r.PartID); len(causes) > 0 {
			if failed == nil && !r.Names() {
				// A pasted error that names no image (too many images,
				// data that is no image): repaired once nothing causes it.
				resolved = func(_ *store.Session, fs []scan.Finding) bool {
					return len(scan.MediaCauses(others(fs), text, r.PartID)) == 0
				}
			}
			return w.causeSteps(st, causes, resolved)
		}
		marked := scan.MarkedRules(text)
		if causes := scan.MarkedCauses(others(w.findings), marked); len(causes) > 0 {
			// OpenCode's own error (SF213's ProviderModelNotFoundError):
			// repaired through the findings of the rules it is, once none
			// is left.
			return w.causeSteps(st, causes, func(_ *store.Session, fs []scan.Finding) bool {
				return len(scan.MarkedCauses(others(fs), marked)) == 0
			})
		}
		st.why = w.noRepairWhy(r, marked, text, failed)
		return []step{st}
	}
	if why, ok := scan.Resolved(r, w.orig, others(w.findings), w.opts.validation().OpenCode); ok {
		st.note = "the provider error " + describeError(r)
		if r.TargetID != "" {
			st.note += " (stored message " + r.TargetID + ")"
		}
		st.note += ": " + why + "; nothing to do"
		st.done = true
		return []step{st}
	}
	if !r.Names() && !r.Defect.SessionWide() {
		causes := scan.ErrorCauses(others(w.findings), text)
		if len(causes) == 0 {
			st.why = scan.CausesNote(causes) + "; nothing changed"
			return []step{st}
		}
		if failed == nil {
			// A pasted error: repaired once nothing causes it any more.
			resolved = func(_ *store.Session, fs []scan.Finding) bool {
				return len(scan.ErrorCauses(others(fs), text)) == 0
			}
		}
		return w.causeSteps(st, causes, resolved)
	}
	if r.MapErr != nil && !r.Defect.SessionWide() {
		st.why = "it maps to no stored message (" + r.MapErr.Error() + "); nothing changed"
		return []step{st}
	}
	if r.TargetID != "" {
		st.f.MessageID = r.TargetID
	}
	until := ""
	if failed != nil {
		until = failed.ID
	}
	st.strats = errorStrats(r.Defect, r.TargetID, until, "the provider rejected it: "+describeError(r))
	st.gone = resolved
	return []step{st}
}

// causeSteps repairs an error through the findings that cause it (each by
// its own strategies, unless the plan has it already), then holds st once
// resolved says the error no longer applies.
func (w *work) causeSteps(st step, causes []scan.Finding, resolved func(*store.Session, []scan.Finding) bool) []step {
	st.note = scan.CausesNote(causes)
	var out []step
	for _, c := range causes {
		if !w.planned[findingKey(c)] {
			w.planned[findingKey(c)] = true
			out = append(out, w.stepFor(c))
		}
	}
	st.leftWhy = "the repairs of the places that cause it leave the problem in place"
	st.gone = resolved
	return append(out, st)
}

// describeError names an error by its type and index or item id:
// "invalid_signature at messages.1.content.0".
func describeError(r *opencode.Recovery) string {
	if !r.Names() {
		return string(r.Type)
	}
	return string(r.Type) + " at " + r.Where()
}

// storedErrorSteps repair what the provider error stored on the session's
// failed attempt (SF302) points at. The failed attempt itself is left alone.
func (w *work) storedErrorSteps(f scan.Finding) []step {
	failed := opencode.LastFailedAttempt(w.orig)
	if failed == nil || providerErrorText(failed) == "" {
		return []step{{f: f, why: "no assistant message carries a provider error; nothing changed"}}
	}
	return w.errorSteps(f, providerErrorText(failed), failed)
}

// findingErrorStep repairs a preflight finding: its message, by the error
// class it predicts.
func (w *work) findingErrorStep(f scan.Finding) step {
	st := step{f: f}
	d := opencode.DefectOf(opencode.ErrorType(f.ErrorType), f.ProviderError)
	if d == opencode.DefectNone || f.MessageID == "" {
		st.strats = nil
		st.why = "report only: sessfix has no storage repair for this provider rule"
		if opencode.ErrorType(f.ErrorType).NotRepairedYet() {
			st.why = opencode.NotRepairedYetNote
		}
		return st
	}
	st.strats = errorStrats(d, f.MessageID, "", f.Message)
	st.gone = func(s *store.Session, fs []scan.Finding) bool {
		return !present(f, fs) && !d.Shows(s, s.Message(f.MessageID))
	}
	return st
}

// providerErrorText is the provider's error text stored on a failed
// assistant message ("" for none or an abort).
func providerErrorText(m *store.Message) string {
	name := opencode.ErrorName(m)
	if name == "" || name == "MessageAbortedError" || sent.ExcludedBySessfix(m) {
		return ""
	}
	return m.Get("error.data.message").String()
}

// PlanFromError plans the repair a provider error calls for (`fix --error
// TEXT`): classify the text, map its messages.N to the stored message
// (opencode.ReadError, against the failed attempt that stored the text when the
// session has one), and repair that message; an error that names no message
// is mapped through the preflight to the findings that produce it, and
// those are repaired. When nothing can be mapped exactly the plan changes
// nothing and says why in Unfixed.
func PlanFromError(s *store.Session, errText string, opts Options) (*SessionPlan, error) {
	w, err := newWork(s, &opts, nil)
	if err != nil {
		return nil, err
	}
	f := scan.Finding{
		Code: scan.SF302, Rule: "failed-attempt", Severity: scan.Error,
		Message:       "the provider error given with --error",
		ProviderError: errText,
		Store:         s.Store, StorePath: s.Store.Path, Shape: s.Store.Shape, SessionID: s.ID,
	}
	if codes := scan.MarkedRules(errText); len(codes) > 0 {
		// OpenCode's own error, not a provider's.
		f.Message = "the error given with --error, the one " + strings.Join(codes, " or ") + " reports"
	}
	failed := opencode.FailedAttempt(s, errText)
	if failed != nil {
		f.MessageID = failed.ID
	}
	steps := w.errorSteps(f, errText, failed)
	if last := &steps[len(steps)-1]; last.f.ErrorType != "" {
		last.f.Message = "the provider error " + last.f.ErrorType
		if last.f.Index != "" {
			last.f.Message += " at " + last.f.Index
		}
		if last.f.MessageID != "" && (failed == nil || last.f.MessageID != failed.ID) {
			last.f.Message += " (stored message " + last.f.MessageID + ")"
		}
	}
	return w.run(steps)
}

// noRepairWhy says why an error no finding causes changes nothing: marked
// are the rules it is (OpenCode's own errors), failed the stored attempt
// (nil for a pasted error).
func (w *work) noRepairWhy(r *opencode.Recovery, marked []string, text string, failed *store.Message) string {
	switch {
	case len(marked) > 0:
		return scan.MarkedNoneNote(marked) + "; nothing changed"
	case r.Type == opencode.ErrorNone:
		return "sessfix does not recognise this provider error; nothing changed"
	case opencode.NoCauseNote(r.Type) != "":
		return opencode.NoCauseNoteIn(r.Type, w.orig.ID, w.orig.Store.Path) + "; nothing changed"
	case !r.Type.NotRepairedYet():
		return fmt.Sprintf("sessfix has no storage repair for %s errors; nothing changed", r.Type)
	}
	if failed == nil {
		if none := sendsNone(w.orig, text); none != "" {
			// A pasted image error about a session that sends no image:
			// removing an image cannot help here; the user has likely
			// pasted another session's error.
			return fmt.Sprintf("%s errors are about the images a request sends, and the next request of this session sends no %s: "+
				"the error is likely another session's; nothing changed", r.Type, none)
		}
	}
	return fmt.Sprintf("%s errors are %s; nothing changed", r.Type, opencode.NotRepairedYetNote)
}

// sendsNone names what the next request of s does not send at all among
// what an image error is about ("images", or "images or documents" when
// the error text counts documents too), or is "" when it sends some.
func sendsNone(s *store.Session, text string) string {
	n, withDocs := opencode.CountedMedia(s, sent.Build(s, sent.Options{NextPrompt: true}), text)
	switch {
	case n > 0:
		return ""
	case withDocs:
		return "images or documents"
	}
	return "images"
}
