package scan

var ruleSF154 = preflightRule(&Rule{
	Code:          SF154,
	Name:          "thinking-signature",
	Severity:      Error,
	Summary:       "a thinking block is sent with an empty signature or empty redacted data",
	What:          "A thinking block of the request carries an empty `signature`, or a redacted thinking block empty `data`: the metadata key exists (so OpenCode sends the block) but holds nothing. A signature that does not match its text cannot be checked offline; the provider's stored error reports it (SF302).",
	Why:           "Anthropic checks every thinking block's signature and rejects the request.",
	ProviderError: "messages.N.content.M: Invalid `signature` in `thinking` block",
	FixDoc:        "`stripThinkingParts` removes the thinking parts of that message (backed up first).",
	Fixable:       true,
	Fix:           "stripThinkingParts",
})
