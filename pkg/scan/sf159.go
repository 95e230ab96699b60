package scan

var ruleSF159 = preflightRule(&Rule{
	Code:          SF159,
	Name:          "prefill-unsupported",
	Severity:      Info,
	Summary:       "the history ends with an assistant message and the model rejects prefill",
	What:          "The session's model (newer Claude models) does not accept a request that ends with an assistant message, and the history, which OpenCode would send as it is because the last turn did not finish, ends with one.",
	Why:           "The request is rejected; a new prompt ends the request with a user message, so sending one is the way out.",
	ProviderError: "This model does not support assistant message prefill. The conversation must end with a user message.",
	FixDoc:        "Report only: sending a new prompt ends the request with a user message.",
	Fixable:       false,
	Fix:           "",
})
