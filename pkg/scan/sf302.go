package scan

import (
	"fmt"
	"strings"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF302 = &Rule{
	Code:     SF302,
	Name:     "failed-attempt",
	Severity: Error,
	Summary:  "the last attempt failed with a provider error that the stored history causes",
	What: "The session's last assistant message carries a provider error (`error.name` `APIError`, or another " +
		"error with a `data.message`) whose text error-driven recovery classifies, for every provider family " +
		"OpenCode talks to: Anthropic and Bedrock (thinking_block_order, thinking_disabled_violation, " +
		"tool_result_missing, empty_content, invalid_signature), DeepSeek and Kimi (reasoning_content_missing), " +
		"the OpenAI Responses API (reasoning_without_following_item, encrypted_content_invalid, " +
		"item_not_persisted) and Gemini (thought_signature_corrupted), or one of the recognised types without a " +
		"storage fix (thinking_modified, prefill_unsupported, first_message_not_user, reasoning_item_missing, " +
		"invalid_item_id, thought_signature_missing, turn_order), or an error of a history too big to send " +
		"(image_too_large, image_dimensions, too_many_images, invalid_image, context_overflow; " +
		"also OpenCode's `ContextOverflowError` whatever its text): an image over a limit that a user pasted is repaired " +
		"through the preflight's finding of it (SF170, SF171: `shrinkImage`), too many images through SF172's (`markToolCompacted`), " +
		"image data that is no image through SF173's (`replaceMedia`), else an image the provider could not process through SF181's (the same, on " +
		"the images the failed request was the first to send), a history over the context window through SF174's " +
		"(`markToolCompacted`). The finding names the type, the provider's text and the place " +
		"it points at: a `messages.N` index mapped to the stored message (and part), or an item id (`rs_…`, " +
		"`msg_…`, `fc_…`, `call_…`) mapped to the part that stores it (`metadata.openai.itemId`, a tool part's " +
		"`callID`). An error that names no message (\"messages: text content blocks must contain " +
		"non-whitespace text\") is mapped through the preflight instead: the finding lists the preflight " +
		"findings whose predicted error is this one. For errors whose cause every turn may share (DeepSeek's " +
		"missing reasoning_content, another account's encrypted reasoning, thought signatures or Bedrock " +
		"signatures, item ids " +
		"with `store: false`) the finding lists every message before the attempt that shows it. Messages " +
		"sessfix itself excluded are not failed attempts.",
	Why: "OpenCode stores the failed attempt (the prompt and an assistant message with the error) and sends the " +
		"same broken history on every retry: the session is bricked now, not later.",
	ProviderError: "the text stored in `error.data.message`, for example: messages.3.content.0.type: Expected " +
		"`thinking` or `redacted_thinking`, but found `tool_use`. Or: thinking is enabled but reasoning_content " +
		"is missing in assistant tool call message at index 2. Or: Item 'rs_…' of type 'reasoning' was provided " +
		"without its required following item.",
	FixDoc: "Error-driven recovery: the index is mapped to the exact stored message the provider meant (through " +
		"the preflight's index map, never by guessing neighbours; an item id to the part that stores it) and " +
		"repaired by type: thinking_block_order → SF103's fix (`moveThinkingFirst`, else `stripThinkingParts`); " +
		"thinking_disabled_violation → `stripThinkingParts`; tool_result_missing → `markToolAborted`; " +
		"empty_content → SF101/SF104's fix (`replaceEmptyTextParts`, else `injectTextPart`); invalid_signature → " +
		"strip that message's thinking (`stripThinkingParts`, and `excludeMessage` when it is the final " +
		"tool-loop message; from Bedrock, whose refusal means another account's signatures, on every message " +
		"with signed reasoning; from GitHub Copilot, which names the first block its upstream cannot verify after a " +
		"switch of account or model, on the named message and every later one: its signed thinking stripped, " +
		"`metadata.copilot.reasoningOpaque` (OpenCode 1.1's Chat Completions signature) dropped from the parts " +
		"that keep it); reasoning_content_missing → `prependThinkingPart` (SF163's fix: reasoning \"(reasoning not recorded)\", " +
		"the tool calls and outputs stay; else `excludeMessage`) on every tool-call turn OpenCode sends " +
		"without a non-empty reasoning_content; reasoning_without_following_item → `dropEncryptedReasoning` on the named " +
		"message (else `excludeMessage`); encrypted_content_invalid → `dropEncryptedReasoning` on every " +
		"reasoning part; item_not_persisted → `dropItemIDs` on every part; thought_signature_corrupted → " +
		"`dropThoughtSignatures` on every signed function call. Each of these was proven against real " +
		"OpenCode 1.18.33 and the provider's strict mock. An error that names no message is repaired by " +
		"repairing the preflight findings that produce it. The types without a storage fix are reported only. " +
		"The failed attempt itself is left alone: OpenCode already skips the errored message.\n\n" +
		"Whether the stored error still applies is decided from the records alone, never from file times " +
		"(a copy, a restore or a checkout resets those): it is history once sessfix excluded the message it " +
		"points at, or once nothing at error level is found on that message, the message no longer shows what " +
		"the error describes, and its records show a change made after the attempt (a time inside the " +
		"message or its parts later than the attempt's, a synthetic part, no thinking left for a thinking " +
		"error, or another block at the index where the error says what it found). For the errors whose " +
		"defect is a record's content (a metadata key, a turn without reasoning) no message showing it any " +
		"more is the proof. For an error that names no message the whole history before the attempt is " +
		"weighed the same way. A history error stays as info, so it is visible, and no longer fails the scan; " +
		"`fix` plans nothing for it.",
	Fixable: true,
	Fix:     "errorDrivenRecovery",
	Check:   checkFailedAttempt,
}

func checkFailedAttempt(c *Context) {
	m := opencode.LastFailedAttempt(c.Session)
	if m == nil {
		return
	}
	text := m.Get("error.data.message").String()
	r := opencode.ReadError(c.Session, text, m)
	f := At(m, nil)
	f.ErrorType = string(r.Type)
	f.ProviderError = text
	f.Index = r.Index
	f.Message = "the last attempt failed with " + opencode.ErrorName(m) + " " + string(r.Type)
	where := r.Where()
	if r.Names() && r.MapErr != nil && !r.Defect.InRecords() {
		f.Message += " at " + where + ", which does not map to a stored message: " + r.MapErr.Error()
		c.reportNoFix(f)
		return
	}
	others := othersFound(c)
	why, resolved := Resolved(r, c.Session, others, c.Opts.OpenCode)
	switch {
	case r.TargetID != "":
		// The finding names the message (not the part): a repair that
		// re-keys the part must not make it a new finding. The part is
		// named while the error still applies: once repaired, the index
		// may name another block of the message. A session-wide defect
		// stays on the failed attempt: its repair may remove what the
		// error's id maps by (an item id).
		if !r.Defect.SessionWide() {
			f = relocate(f, c.Session.Message(r.TargetID), nil)
		}
		f.Message += " at " + where + " (stored message " + r.TargetID
		if r.PartID != "" && !resolved {
			f.Message += ", part " + r.PartID
		}
		f.Message += ")"
	case r.Names() && !resolved:
		f.Message += " at " + where + ", which does not map to a stored message: " + r.MapErr.Error()
	case r.Names():
		f.Message += " at " + where
	}
	if resolved {
		// The stored error is history now: say so without failing the
		// scan or planning another repair.
		f.Severity = Info
		f.Message += "; " + why + ", so resuming the session should no longer fail this way"
		c.Report(f)
		return
	}
	switch {
	case r.Defect.SessionWide():
		shown := r.Showing(c.Session, m.ID)
		f.Message += "; " + ShowsNote(r.Defect, shown)
	case !r.Names():
		causes := ErrorCauses(others, text)
		if len(causes) == 0 {
			causes = MediaCauses(others, text, "")
		}
		if note := opencode.NoCauseNoteIn(r.Type, c.Session.ID, c.Session.Store.Path); len(causes) == 0 && note != "" {
			f.Message += "; " + note
			c.reportNoFix(f)
			return
		}
		f.Message += "; " + CausesNote(causes)
		if len(causes) == 0 && !r.Type.NotRepairedYet() {
			c.reportNoFix(f)
			return
		}
	}
	if fix := r.DefaultFix(); fix != "" {
		f.Fix = fix
		c.Report(f)
	} else if causes := MediaCauses(others, text, r.PartID); len(causes) > 0 {
		// An image over a limit, or too many: the preflight finds it, and
		// its repair (shrinkImage, markToolCompacted) is this error's.
		f.Fix = causes[0].Fix
		if r.Names() {
			f.Message += "; the preflight finds the image: " + DescribeCauses(causes) + ", which " + f.Fix + " repairs"
		} else {
			f.Message += ", which " + f.Fix + " repairs"
		}
		c.Report(f)
	} else if r.Type.NotRepairedYet() {
		f.Message += "; " + opencode.NotRepairedYetNote
		c.reportNoFix(f)
	} else {
		f.Message += "; no storage fix exists for this error"
		c.reportNoFix(f)
	}
}

// ShowsNote names the messages that show a session-wide defect: "2
// messages send it: msg_…, msg_…".
func ShowsNote(d opencode.Defect, shown []*store.Message) string {
	ids := make([]string, len(shown))
	for i, m := range shown {
		ids[i] = m.ID
	}
	what := "message shows it"
	if len(ids) != 1 {
		what = "messages show it"
	}
	return fmt.Sprintf("%d %s (%s): %s", len(ids), what, d.What(), strings.Join(ids, ", "))
}

// relocate points a finding at the stored message (and part) a provider
// index maps to, keeping everything else.
func relocate(f Finding, m *store.Message, p *store.Part) Finding {
	at := At(m, p)
	f.MessageID, f.PartID, f.Location = at.MessageID, at.PartID, at.Location
	return f
}

// othersFound returns what every other rule finds on the session, as
// CheckSession reports it. SF302 runs after every other 1.x rule
// (runOrder), so when every rule runs in this check the others have already reported
// (the OpenCode 2 rules, SF4xx, run after it and say nothing about the
// history a provider is sent); with --select or
// --ignore the session is checked again with every rule but SF302, since
// whether a stored error still applies does not depend on what the user
// asked to see.
func othersFound(c *Context) []Finding {
	if len(c.Opts.Select) == 0 && len(c.Opts.Ignore) == 0 {
		return dedupePreflight(append([]Finding(nil), (*c.out)...))
	}
	o := *c.Opts
	o.Select, o.Ignore = nil, []string{SF302}
	return CheckSession(c.Session, &o)
}

// ExplainsError reports whether a finding is of the class of a provider
// error type: a preflight finding predicting that type, or a record-rule
// finding, which carries no type (counted, to be safe, as explaining it).
func ExplainsError(f Finding, t opencode.ErrorType) bool {
	return f.Code != SF302 && (f.ErrorType == string(t) || f.ErrorType == "")
}
