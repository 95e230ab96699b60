package fix

import (
	"fmt"
	"strings"

	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

// defect is what a provider error says is wrong with the message it points
// at, finer than scan.ErrorType where the repair differs.
type defect int

const (
	defNone          defect = iota
	defOrderFinal           // the final tool-loop message must start with (signed) thinking
	defOrderFirst           // a message with thinking must start with it
	defFinalThinking        // the last block of a message cannot be thinking
	defDisabled             // thinking disabled: no thinking allowed
	defToolMissing          // tool_use without tool_result
	defEmpty                // empty content or blank text
	defSignature            // invalid or missing signature
)

func classify(t scan.ErrorType, text string) defect {
	l := strings.ToLower(text)
	switch t {
	case scan.ErrorThinkingBlockOrder:
		switch {
		case strings.Contains(l, "final block") || strings.Contains(l, "cannot be thinking") || strings.Contains(l, "cannot be `thinking`"):
			return defFinalThinking
		case strings.Contains(l, "first block"):
			return defOrderFirst
		}
		return defOrderFinal
	case scan.ErrorThinkingDisabledViolation:
		return defDisabled
	case scan.ErrorToolResultMissing:
		return defToolMissing
	case scan.ErrorEmptyContent:
		return defEmpty
	case scan.ErrorInvalidSignature:
		return defSignature
	}
	return defNone
}

// broken reports whether the stored message still shows the defect. A
// message OpenCode no longer sends shows none.
func broken(s *store.Session, id string, d defect) bool {
	m := s.Message(id)
	if m == nil || scan.SkippedByOpenCode(m) {
		return false
	}
	needsSig := scan.NeedsSignature(m.Get("providerID").String(), m.Get("modelID").String())
	sent := func(p *store.Part) bool {
		if scan.IsMetaPart(p) {
			return false
		}
		if scan.IsThinkingPart(p) {
			return !needsSig || scan.IsSigned(p)
		}
		return !(p.Type == "text" && scan.PartText(p) == "")
	}
	switch d {
	case defOrderFinal, defOrderFirst, defFinalThinking:
		for _, st := range stepRanges(m) {
			var first, last *store.Part
			thinking, tools := false, false
			for _, p := range m.Parts[st[0]:st[1]] {
				if !sent(p) {
					continue
				}
				if first == nil {
					first = p
				}
				last = p
				thinking = thinking || scan.IsThinkingPart(p)
				tools = tools || p.Type == "tool"
			}
			switch {
			case d == defOrderFinal && tools && !scan.IsThinkingPart(first):
				return true
			case d == defOrderFirst && thinking && !scan.IsThinkingPart(first):
				return true
			case d == defFinalThinking && last != nil && scan.IsThinkingPart(last):
				return true
			}
		}
		return false
	case defDisabled:
		return len(scan.ThinkingParts(m)) > 0
	case defToolMissing:
		for _, p := range m.Parts {
			if unfinishedTool(p) {
				return true
			}
		}
		return false
	case defEmpty:
		return !scan.HasContent(m) || hasBlankText(m)
	case defSignature:
		return scan.OwnsSignedThinking(m)
	}
	return false
}

// errorStrats are the strategies error-driven recovery tries for a defect on
// the target message, in order.
func errorStrats(d defect, target string) []strat {
	f := scan.Finding{Code: "SF302", MessageID: target}
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
	case defOrderFinal:
		return []strat{bind(stMove), bind(stExclude), bind(stPrepend)}
	case defOrderFirst:
		return []strat{bind(stMove), stripUnlessFinal, bind(stExclude), bind(stPrepend)}
	case defFinalThinking:
		return []strat{bind(stInject), bind(stExclude)}
	case defDisabled:
		return []strat{bind(stStrip), bind(stExclude)}
	case defToolMissing:
		return []strat{abortAll, bind(stExclude)}
	case defEmpty:
		return []strat{bind(stReplace), bind(stInject), bind(stExclude)}
	case defSignature:
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

// errorStep builds the repair of the stored message a provider error points
// at. errored is the failed attempt's assistant message ("" for a pasted
// error): the history is rebuilt as it was before it.
func (w *work) errorStep(f scan.Finding, text, errored string) step {
	st := step{f: f}
	t := scan.DetectErrorType(text)
	if f.ErrorType == "" {
		st.f.ErrorType = string(t)
	}
	d := classify(t, text)
	if d == defNone {
		if t == scan.ErrorNone {
			st.why = "the provider error is not one sessfix recognises; nothing changed"
		} else {
			st.why = fmt.Sprintf("%s errors have no storage repair; nothing changed", t)
		}
		return st
	}
	n, ok := scan.ExtractMessageIndex(text)
	if !ok {
		// No message can be named, so sessfix changes nothing for the error
		// itself; the session's findings of the same class (a whitespace-only
		// block the preflight predicts) are repaired by their own steps, and
		// once none is left the stored error is covered.
		explained := func(fs []scan.Finding) bool {
			for _, g := range fs {
				if g.Severity == scan.Error && scan.ExplainsError(g, t) {
					return true
				}
			}
			return false
		}
		st.leftWhy = fmt.Sprintf("the %s error names no messages.N, so the message cannot be found exactly; nothing changed", t)
		if !explained(w.findings) {
			// Nothing in the session explains the error: no repair of
			// sessfix's can be said to clear it.
			st.why = st.leftWhy
			return st
		}
		st.gone = func(_ *store.Session, fs []scan.Finding) bool { return !explained(fs) }
		return st
	}
	target, err := MapProviderIndex(w.orig, n, MapOptions{Until: errored, AsOfError: true})
	if err != nil {
		st.why = "cannot map the error to a stored message: " + err.Error() + "; nothing changed"
		return st
	}
	st.f.MessageID = target
	if st.f.Index == "" {
		st.f.Index = scan.ExtractIndex(text)
	}
	st.note = fmt.Sprintf("provider error %s at messages.%d is stored message %s", t, n, target)
	if !broken(w.s, target, d) {
		st.note += ", which no longer shows the problem; nothing to do"
		st.done = true
		return st
	}
	st.strats = errorStrats(d, target)
	st.gone = func(s *store.Session, _ []scan.Finding) bool { return !broken(s, target, d) }
	return st
}

// storedErrorStep repairs what the provider error stored on the session's
// failed attempt (SF302) points at. The failed attempt itself is left alone.
func (w *work) storedErrorStep(f scan.Finding) step {
	var errored *store.Message
	if m := w.orig.Message(f.MessageID); m != nil && providerErrorText(m) != "" {
		errored = m
	}
	for i := len(w.orig.Messages) - 1; errored == nil && i >= 0; i-- {
		if m := w.orig.Messages[i]; m.Role == "assistant" && providerErrorText(m) != "" {
			errored = m
		}
	}
	if errored == nil {
		return step{f: f, why: "no assistant message carries a provider error; nothing changed"}
	}
	return w.errorStep(f, providerErrorText(errored), errored.ID)
}

// findingErrorStep repairs a preflight finding: its message, by the error
// class it predicts.
func (w *work) findingErrorStep(f scan.Finding) step {
	st := step{f: f}
	d := classify(scan.ErrorType(f.ErrorType), f.ProviderError)
	if d == defNone || f.MessageID == "" {
		st.strats = nil
		st.why = "report only: sessfix has no storage repair for this provider rule"
		return st
	}
	st.strats = errorStrats(d, f.MessageID)
	st.gone = func(s *store.Session, fs []scan.Finding) bool {
		return !present(f, fs) && !broken(s, f.MessageID, d)
	}
	return st
}

// providerErrorText is the provider's error text stored on a failed
// assistant message ("" for none or an abort).
func providerErrorText(m *store.Message) string {
	name := scan.ErrorName(m)
	if name == "" || name == "MessageAbortedError" || excludedBySessfix(m) {
		return ""
	}
	return m.Get("error.data.message").String()
}

// PlanFromError plans the repair a provider error calls for (`fix --error
// TEXT`): classify the text, map its messages.N to the stored message
// through MapProviderIndex, and repair that message. When the index cannot
// be mapped exactly the plan changes nothing and says why in Unfixed.
func PlanFromError(s *store.Session, errText string, opts Options) (*SessionPlan, error) {
	w, err := newWork(s, &opts, nil)
	if err != nil {
		return nil, err
	}
	f := scan.Finding{
		Code: "SF302", Rule: "failed-attempt", Severity: scan.Error,
		Message:       "provider error given with --error",
		ProviderError: errText,
		Store:         s.Store, StorePath: s.Store.Path, Shape: s.Store.Shape, SessionID: s.ID,
	}
	st := w.errorStep(f, errText, "")
	if st.why == "" && !st.done {
		st.f.Message = "provider error " + st.f.ErrorType + " at " + st.f.Index
	}
	return w.run([]step{st})
}
