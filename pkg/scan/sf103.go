package scan

import (
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF103 = &Rule{
	Code:     SF103,
	Name:     "thinking-not-first",
	Severity: Error,
	Summary:  "an assistant message has thinking, but its first block is not thinking",
	What: "An assistant message (each step of it, from one step-start to the next) that contains thinking whose " +
		"first non-meta part is text or a tool call: reasoning stored after a tool part or after text. Meta " +
		"parts are ignored, since every OpenCode step begins with step-start. On Anthropic and Bedrock models " +
		"only thinking that is actually sent (signed, or with redacted data) counts; unsigned thinking is " +
		"dropped before sending and is reported by SF107.",
	Why: "Anthropic rejects any assistant message, anywhere in the history, that contains thinking and does not " +
		"start with it, so every later prompt in the session fails. Other providers do not check the order; " +
		"there the finding is a warning.",
	ProviderError: "If an assistant message contains any thinking blocks, the first block must be thinking or " +
		"redacted_thinking. Found text.",
	FixDoc: "`moveThinkingFirst` when the message owns a signed thinking part: that part gets a new id that sorts " +
		"before the message's first content part, keeping its text and signature. Otherwise " +
		"`stripThinkingParts` removes the message's thinking parts (backed up first).",
	Fixable: true,
	Fix:     "moveThinkingFirst|stripThinkingParts",
	Check:   checkThinkingNotFirst,
}

// steps splits a message's parts at step-start: the AI SDK turns each step
// into its own assistant message when OpenCode builds a request.
// Each step is a capped subslice of m.Parts.
func steps(m *store.Message) [][]*store.Part {
	var out [][]*store.Part
	start := 0
	for i, p := range m.Parts {
		if p.Type == "step-start" && i > start {
			out = append(out, m.Parts[start:i:i])
			start = i
		}
	}
	if n := len(m.Parts); n > start {
		out = append(out, m.Parts[start:n:n])
	}
	return out
}

func checkThinkingNotFirst(c *Context) {
	v := newSentView(c)
	for _, m := range c.Session.Messages {
		if m.Role != "assistant" || !v.sent(m) || Streaming(c, m) {
			continue
		}
		signed := opencode.NeedsSignature(m.Get("providerID").String(), m.Get("modelID").String())
		counts := func(p *store.Part) bool { return opencode.IsThinkingPart(p) && (!signed || opencode.IsSigned(p)) }
		for _, step := range steps(m) {
			var first, thinking *store.Part
			for _, p := range step {
				if opencode.IsMetaPart(p) || (opencode.IsThinkingPart(p) && !counts(p)) {
					continue
				}
				if first == nil {
					first = p
				}
				if thinking == nil && counts(p) {
					thinking = p
				}
			}
			if thinking == nil || first == thinking {
				continue
			}
			f := At(m, thinking)
			found := "text"
			if first.Type == "tool" || first.Type == "tool_use" {
				found = "tool_use"
			}
			f.Message = "thinking comes after a " + first.Type + " part instead of first in the assistant message"
			if opencode.OwnsSignedThinking(m) {
				f.Fix = "moveThinkingFirst"
			} else {
				f.Fix = "stripThinkingParts"
			}
			if signed {
				f.ProviderError = "If an assistant message contains any thinking blocks, the first block must be thinking or redacted_thinking. Found " + found + "."
			} else {
				f.Severity = Warning
			}
			c.Report(f)
		}
	}
}
