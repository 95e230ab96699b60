package scan

func init() {
	registerPreflight(&Rule{
		Code:          "SF151",
		Name:          "blank-text-block",
		Severity:      Error,
		Summary:       "a text block sent to anthropic is empty or whitespace-only",
		What:          "A text content block of the request is empty or holds only whitespace. OpenCode drops `\"\"` text for Anthropic, but keeps whitespace-only text, and OpenCode 1.18 sends an empty text part as `\" \"` when its message holds signed reasoning (the shape a kill mid-text leaves).",
		Why:           "Anthropic rejects the request, so every later prompt in the session fails the same way.",
		ProviderError: "messages: text content blocks must contain non-whitespace text (or: messages: text content blocks must be non-empty)",
		FixDoc:        "`replaceEmptyTextParts` gives the stored text part the placeholder text and marks it synthetic.",
		Fixable:       true,
		Fix:           "replaceEmptyTextParts",
	})
}
