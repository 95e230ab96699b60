package scan

func init() {
	registerPreflight(&Rule{
		Code:          "SF158",
		Name:          "final-trailing-whitespace",
		Severity:      Warning,
		Summary:       "the history ends with assistant text that ends in whitespace",
		What:          "The history, sent without a new prompt, ends with an assistant message whose last block is text ending in whitespace. The provider SDK trims the last text part of such a request, so this only happens when a part it drops follows the text.",
		Why:           "Anthropic rejects a final assistant message that ends in whitespace.",
		ProviderError: "messages: final assistant content cannot end with trailing whitespace",
		FixDoc:        "Report only: a new prompt moves the message out of the final position.",
		Fixable:       false,
		Fix:           "",
	})
}
