package scan

import (
	"time"

	"github.com/sessfix/sessfix/pkg/store"
)

func init() {
	register(&Rule{
		Code:     "SF302",
		Name:     "failed-attempt",
		Severity: Error,
		Summary:  "the last attempt failed with a provider error that the stored history causes",
		What: "The session's last assistant message carries a provider error (`error.name` `APIError`, or another " +
			"error with a `data.message`) whose text error-driven recovery classifies: thinking_block_order, " +
			"thinking_disabled_violation, tool_result_missing, empty_content, or one of the recognised types " +
			"without a storage fix (thinking_modified, prefill_unsupported) and invalid_signature. The finding " +
			"names the type, the provider's text and the `messages.N` index it points at.",
		Why: "OpenCode stores the failed attempt (the prompt and an assistant message with the error) and sends the " +
			"same broken history on every retry: the session is bricked now, not later.",
		ProviderError: "the text stored in `error.data.message`, for example: messages.3.content.0.type: Expected " +
			"`thinking` or `redacted_thinking`, but found `tool_use`.",
		FixDoc: "Error-driven recovery: the index is mapped to the exact stored message the provider meant (through " +
			"the preflight's index map, never by guessing neighbours) and repaired by type: thinking_block_order → " +
			"SF103's fix (`moveThinkingFirst`, else `stripThinkingParts`); thinking_disabled_violation → " +
			"`stripThinkingParts`; tool_result_missing → `markToolAborted`; empty_content → SF101/SF104's fix " +
			"(`replaceEmptyTextParts`, else `injectTextPart`); invalid_signature → strip that message's thinking " +
			"(`stripThinkingParts`, and `excludeMessage` when it is the final tool-loop message). " +
			"thinking_modified and prefill_unsupported have no storage fix and are reported only. The failed " +
			"attempt itself is left alone: OpenCode already skips the errored message. Once the message the " +
			"error points at is repaired (excluded, changed since the attempt with nothing left to report on it, " +
			"or stripped of the thinking the error was about), the finding stays as info so the history is " +
			"visible, and no longer fails the scan.",
		Fixable: true,
		Fix:     "errorDrivenRecovery",
		Check:   checkFailedAttempt,
	})
}

func checkFailedAttempt(c *Context) {
	ms := c.Session.Messages
	for i := len(ms) - 1; i >= 0; i-- {
		m := ms[i]
		if m.Role != "assistant" {
			continue
		}
		text := m.Get("error.data.message").String()
		t := DetectErrorType(text)
		if t == ErrorNone {
			return
		}
		f := At(m, nil)
		f.ErrorType = string(t)
		f.ProviderError = text
		f.Index = ExtractIndex(text)
		f.Message = "the last attempt failed with " + ErrorName(m) + " " + string(t)
		if f.Index != "" {
			f.Message += " at " + f.Index
			// The request that failed held what came before the errored
			// message, sessfix's exclusions counted as they were then.
			req := BuildRequest(c.Session, RequestOptions{Until: m.ID, AsOfError: true})
			if id, part, err := req.LocateIndex(f.Index); err != nil {
				f.Message += "; " + err.Error()
			} else {
				// The finding names the message (not the part): a repair
				// that re-keys the part must not make it a new finding.
				target := c.Session.Message(id)
				f = relocate(f, target, nil)
				f.Message += ", which is stored message " + id
				if part != "" {
					f.Message += " part " + part
				}
				if why, ok := repairedSince(c, m, target, t); ok {
					// The stored error is history now: say so without
					// failing the scan or planning another repair.
					f.Severity = Info
					f.Message += "; " + why + ": resume the session"
					c.Report(f)
					return
				}
			}
		}
		if f.Index == "" {
			if why, ok := clearedSince(c, m, t); ok {
				f.Severity = Info
				f.Message += "; " + why + ": resume the session"
				c.Report(f)
				return
			}
		}
		if fix := t.DefaultFix(); fix != "" {
			f.Fix = fix
			c.Report(f)
		} else {
			f.Message += "; no storage fix exists for this error"
			c.reportNoFix(f)
		}
		return
	}
}

// relocate points a finding at the stored message (and part) a provider
// index maps to, keeping everything else.
func relocate(f Finding, m *store.Message, p *store.Part) Finding {
	at := At(m, p)
	f.MessageID, f.PartID, f.Location = at.MessageID, at.PartID, at.Location
	return f
}

// repairedSince reports whether the stored message a failed attempt points
// at has been repaired since the attempt, so the stored error no longer
// describes the session. It is repaired when sessfix excluded it, or when
// nothing at error level is found on it now and either one of its records
// changed after the attempt (an edit, a re-key, a new part) or, for the
// thinking errors, it holds no thinking any more (stripThinkingParts leaves
// no record behind to carry a newer time). A stored error the checks cannot
// see offline (a corrupted signature) stays an error until the message is
// changed.
func repairedSince(c *Context, failed, target *store.Message, t ErrorType) (string, bool) {
	if target == nil {
		return "", false
	}
	if ExcludedBySessfix(target) {
		return "sessfix has since excluded that message from requests", true
	}
	o := *c.Opts
	o.Select = nil
	o.Ignore = append(append([]string(nil), c.Opts.Ignore...), "SF302")
	for _, g := range CheckSession(c.Session, &o) {
		if g.MessageID == target.ID && g.Severity == Error {
			return "", false
		}
	}
	at := time.UnixMilli(failed.Created)
	if target.Modified.After(at) {
		return "that message has changed since and no longer shows a problem", true
	}
	for _, p := range target.Parts {
		if p.Modified.After(at) {
			return "that message has changed since and no longer shows a problem", true
		}
	}
	switch t {
	case ErrorThinkingBlockOrder, ErrorThinkingDisabledViolation, ErrorInvalidSignature:
		if len(ThinkingParts(target)) == 0 {
			return "that message no longer holds thinking", true
		}
	}
	return "", false
}

// clearedSince is repairedSince for a stored error without a messages.N
// index ("messages: text content blocks must contain non-whitespace text"):
// no exact message can be named, so the whole session is the target. The
// error is history when nothing of its class is found at error level any
// more and a record of the session changed after the attempt.
func clearedSince(c *Context, failed *store.Message, t ErrorType) (string, bool) {
	o := *c.Opts
	o.Select = nil
	o.Ignore = append(append([]string(nil), c.Opts.Ignore...), "SF302")
	for _, g := range CheckSession(c.Session, &o) {
		if g.Severity == Error && (g.ErrorType == string(t) || g.ErrorType == "") {
			return "", false
		}
	}
	at := time.UnixMilli(failed.Created)
	for _, m := range c.Session.Messages {
		if m == failed {
			continue
		}
		if m.Modified.After(at) {
			return "the session has changed since and shows no such problem any more", true
		}
		for _, p := range m.Parts {
			if p.Modified.After(at) {
				return "the session has changed since and shows no such problem any more", true
			}
		}
	}
	return "", false
}
