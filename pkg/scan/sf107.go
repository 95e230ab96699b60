package scan

import "github.com/sessfix/sessfix/pkg/opencode"

var ruleSF107 = &Rule{
	Code:     SF107,
	Name:     "unsigned-thinking",
	Severity: Warning,
	Summary:  "a thinking part has no signature on an anthropic or bedrock model",
	What: "A reasoning part with no signature and no redacted data on a message from an Anthropic or Bedrock " +
		"provider (or a Claude model). OpenCode 1.1 leaves unsigned partial reasoning when it is stopped " +
		"mid-thinking; repair tools leave synthetic thinking. Empty thinking text with a signature is normal " +
		"and not reported; thinking in foreign part types is reported by SF205.",
	Why: "Unsigned thinking is dropped before the request is sent. In older turns that is harmless, but on the " +
		"final tool-loop assistant message the provider then finds a tool call where it expects thinking and " +
		"rejects every later prompt. The preflight reports that fatal case on its own. When OpenCode leaves the " +
		"whole message out of requests (nothing else in it is sent), the finding is info.",
	ProviderError: "messages.N.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. " +
		"When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding " +
		"the lastmost set of `tool_use` and `tool_result` blocks).",
	FixDoc:  "`stripThinkingParts` removes those unsigned thinking parts only (backed up first).",
	Fixable: true,
	Fix:     "stripThinkingParts",
	Check:   checkUnsignedThinking,
}

func checkUnsignedThinking(c *Context) {
	v := newSentView(c)
	for _, m := range c.Session.Messages {
		if m.Role != "assistant" || !v.sent(m) || Streaming(c, m) {
			continue
		}
		if !opencode.NeedsSignature(m.Get("providerID").String(), m.Get("modelID").String()) {
			continue
		}
		for _, p := range m.Parts {
			if p.Type != "reasoning" || opencode.IsSigned(p) {
				continue
			}
			f := At(m, p)
			f.Message = "thinking part has no signature, so it is dropped before sending"
			if opencode.IsSynthetic(p) {
				f.Message = "synthetic thinking part has no signature, so it is dropped before sending"
			}
			if c.dropsMessage(m) {
				f.Severity = Info
				f.Message += "; opencode drops its whole message from requests"
			}
			c.Report(f)
		}
	}
}
