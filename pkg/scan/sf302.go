package scan

import "github.com/sessfix/sessfix/pkg/store"

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
			"attempt itself is left alone: OpenCode already skips the errored message.",
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
				f = relocate(f, c.Session.Message(id), nil)
				f.Message += ", which is stored message " + id
				if part != "" {
					f.Message += " part " + part
				}
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
