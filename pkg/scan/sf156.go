package scan

var ruleSF156 = preflightRule(&Rule{
	Code:          SF156,
	Name:          "thinking-disabled-final",
	Severity:      Warning,
	Summary:       "the history ends with an assistant message holding thinking while thinking is off",
	What:          "Thinking is off for the session's current model, and the history, which OpenCode sends without a new prompt because its last turn did not finish, ends with an assistant message that holds a thinking block.",
	Why:           "With thinking disabled, Anthropic rejects a final-position assistant message that contains thinking. A new prompt moves the message out of the final position, so this is a warning.",
	ProviderError: "messages.N.content.M: When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request.",
	FixDoc:        "`stripThinkingParts` removes the thinking parts of that message (backed up first).",
	Fixable:       true,
	Fix:           "stripThinkingParts",
})
