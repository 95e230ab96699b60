package scan

func init() {
	registerPreflight(&Rule{
		Code:          "SF153",
		Name:          "thinking-not-first-block",
		Severity:      Error,
		Summary:       "an assistant message sent to anthropic has thinking that is not its first block",
		What:          "An assistant message of the request holds a thinking block but starts with text or a tool call: reasoning stored after a tool or text part, or two stored assistant turns merged into one provider message with the thinking in the second.",
		Why:           "Anthropic rejects any assistant message with thinking that does not start with it, anywhere in the history.",
		ProviderError: "messages.N.content.0: If an assistant message contains any thinking blocks, the first block must be `thinking` or `redacted_thinking`. Found `text`.",
		FixDoc:        "`moveThinkingFirst` when the message owns a signed thinking part, else `stripThinkingParts`.",
		Fixable:       true,
		Fix:           "moveThinkingFirst|stripThinkingParts",
	})
}
