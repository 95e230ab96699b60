package scan

var ruleSF155 = preflightRule(&Rule{
	Code:          SF155,
	Name:          "final-block-thinking",
	Severity:      Error,
	Summary:       "an assistant message sent to anthropic ends with thinking",
	What:          "An assistant message of the request ends with a thinking block: a turn killed after its thinking and before any text (OpenCode 1.1 also drops the empty text part that follows), or reasoning stored after the text.",
	Why:           "Anthropic rejects an assistant message whose last block is thinking, anywhere in the history.",
	ProviderError: "messages.N: The final block in an assistant message cannot be `thinking`.",
	FixDoc:        "`injectTextPart` adds a synthetic text part after the thinking.",
	Fixable:       true,
	Fix:           "injectTextPart",
})
