package scan

func init() {
	registerPreflight(&Rule{
		Code:          "SF150",
		Name:          "empty-provider-message",
		Severity:      Error,
		Summary:       "a message is sent to anthropic with no content",
		What:          "The request OpenCode builds for an Anthropic model holds a message with no content block that is not the optional final assistant message. It happens when everything a stored message holds is dropped on the way: an assistant step whose only reasoning has no signature (OpenCode 1.1 stopped mid-thinking), or whose text is empty and whose thinking is dropped.",
		Why:           "Anthropic rejects the whole request, so every later prompt in the session fails the same way.",
		ProviderError: "messages.N: all messages must have non-empty content except for the optional final assistant message",
		FixDoc:        "`injectTextPart` gives the stored message a synthetic text part with the placeholder; when that is not accepted the turn is excluded (`excludeMessage`).",
		Fixable:       true,
		Fix:           "injectTextPart",
	})
}
