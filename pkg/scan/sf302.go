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
				if why, ok := resolvedSince(c, m, target, t); ok {
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
			if why, ok := resolvedSince(c, m, nil, t); ok {
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

// resolvedSince reports whether the problem a failed attempt's stored error
// describes has been repaired since the attempt, so the error is history.
// target is the stored message the error's messages.N maps to, or nil when
// the error names no message ("messages: text content blocks must contain
// non-whitespace text"): then the whole session is the target.
//
// It is repaired when sessfix excluded the target, or when nothing at error
// level is found on it (or, for the whole session, nothing of the error's
// class) and either one of its records changed after the attempt (an edit, a
// re-key, a new part) or, for the thinking errors, the target holds no
// thinking any more (stripThinkingParts leaves no record behind to carry a
// newer time). A stored error the checks cannot see offline (a corrupted
// signature) stays an error until the message is changed.
func resolvedSince(c *Context, failed, target *store.Message, t ErrorType) (string, bool) {
	if target != nil && ExcludedBySessfix(target) {
		return "sessfix has since excluded that message from requests", true
	}
	for _, g := range othersFound(c) {
		if g.Severity != Error {
			continue
		}
		if target != nil && g.MessageID == target.ID || target == nil && ExplainsError(g, t) {
			return "", false
		}
	}
	scope, why := c.Session.Messages, "the session has changed since and shows no such problem any more"
	if target != nil {
		scope, why = []*store.Message{target}, "that message has changed since and no longer shows a problem"
	}
	at := time.UnixMilli(failed.Created)
	for _, m := range scope {
		if m != failed && changedAfter(m, at) {
			return why, true
		}
	}
	switch t {
	case ErrorThinkingBlockOrder, ErrorThinkingDisabledViolation, ErrorInvalidSignature:
		if target != nil && len(ThinkingParts(target)) == 0 {
			return "that message no longer holds thinking", true
		}
	}
	return "", false
}

// changedAfter reports whether the message or one of its parts was written
// after t.
func changedAfter(m *store.Message, t time.Time) bool {
	if m.Modified.After(t) {
		return true
	}
	for _, p := range m.Parts {
		if p.Modified.After(t) {
			return true
		}
	}
	return false
}

// othersFound returns what every other rule finds on the session, as
// CheckSession reports it. SF302 has the highest code, so when every rule
// runs in this check the others have already reported; with --select or
// --ignore the session is checked again with every rule but SF302, since
// whether a stored error still applies does not depend on what the user
// asked to see.
func othersFound(c *Context) []Finding {
	if len(c.Opts.Select) == 0 && len(c.Opts.Ignore) == 0 {
		return dedupePreflight(append([]Finding(nil), (*c.out)...))
	}
	o := *c.Opts
	o.Select, o.Ignore = nil, []string{"SF302"}
	return CheckSession(c.Session, &o)
}

// ExplainsError reports whether a finding is of the class of a provider
// error type: a preflight finding predicting that type, or a record-rule
// finding, which carries no type (counted, to be safe, as explaining it).
func ExplainsError(f Finding, t ErrorType) bool {
	return f.Code != "SF302" && (f.ErrorType == string(t) || f.ErrorType == "")
}
