package scan

import (
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF102 = &Rule{
	Code:     SF102,
	Name:     "thinking-only-message",
	Severity: Error,
	Summary:  "an assistant message holds nothing but thinking",
	What: "An assistant message whose parts, apart from meta parts (step-start, step-finish, snapshot, patch, " +
		"retry), are all thinking. OpenCode 1.1 leaves this shape when it is stopped after the thinking block " +
		"and before any text or tool call.",
	Why: "A signed thinking block as the last block of an assistant message is rejected by Anthropic (\"The final " +
		"block in an assistant message cannot be `thinking`\"), and unsigned thinking is dropped before sending: " +
		"when OpenCode still sends the message, it is empty. Either way every later prompt fails. Messages OpenCode never sends " +
		"(an error other than an abort, or before the last completed compaction) are not reported. Unsigned " +
		"thinking that OpenCode leaves out together with its message (1.18 drops a reasoning part whose " +
		"streaming was cut before any text was stored, then the empty message) is reported as info.",
	ProviderError: "The final block in an assistant message cannot be `thinking`.",
	FixDoc: "`injectTextPart` adds a synthetic text part with the placeholder (default `[user interrupted]`) " +
		"after the thinking, so the message ends with text and keeps its signed thinking first.",
	Fixable: true,
	Fix:     "injectTextPart",
	Check:   checkThinkingOnly,
}

// isThinkingOnly reports whether an assistant message has thinking and every
// non-meta part is thinking.
func isThinkingOnly(m *store.Message) bool {
	if m.Role != "assistant" {
		return false
	}
	n := 0
	for _, p := range m.Parts {
		switch {
		case opencode.IsMetaPart(p):
		case opencode.IsThinkingPart(p):
			n++
		default:
			return false
		}
	}
	return n > 0
}

func checkThinkingOnly(c *Context) {
	v := newSentView(c)
	for _, m := range c.Session.Messages {
		if !isThinkingOnly(m) || !v.sent(m) || Streaming(c, m) {
			continue
		}
		f := At(m, nil)
		if opencode.OwnsSignedThinking(m) || !opencode.NeedsSignature(m.Get("providerID").String(), m.Get("modelID").String()) {
			f.Message = "assistant message holds only thinking, so it ends with a thinking block"
			f.ProviderError = "The final block in an assistant message cannot be `thinking`."
		} else if c.dropsMessage(m) {
			f.Severity = Info
			f.Message = "assistant message holds only unsigned thinking; opencode drops it from requests"
		} else {
			f.Message = "assistant message holds only unsigned thinking, which is dropped before sending and leaves the message empty"
			f.ProviderError = emptyContentError
		}
		c.Report(f)
	}
}
