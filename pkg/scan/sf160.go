package scan

var ruleSF160 = preflightRule(&Rule{
	Code:          SF160,
	Name:          "bedrock-blank-text",
	Severity:      Error,
	Summary:       "a text block sent to bedrock is empty or whitespace-only",
	What:          "On an Amazon Bedrock provider, a text content block of the request is empty or whitespace-only (OpenCode 1.1 does not drop empty text for Bedrock; 1.18 sends whitespace-only text as it is).",
	Why:           "The Converse API rejects the request on every retry.",
	ProviderError: "The text field in the ContentBlock object at messages.N.content.M is blank. Add text to the text field, and try again.",
	FixDoc:        "`replaceEmptyTextParts` gives the stored text part the placeholder text.",
	Fixable:       true,
	Fix:           "replaceEmptyTextParts",
})
