package scan

func init() {
	registerPreflight(&Rule{
		Code:          "SF162",
		Name:          "openai-tool-pairing",
		Severity:      Error,
		Summary:       "a tool call sent to openai has no tool message answering it, or a tool message no call",
		What:          "On an OpenAI provider, an assistant message with `tool_calls` is not followed by a `tool` message for every call id, or a `tool` message does not follow the call it answers.",
		Why:           "OpenAI rejects the request on every retry.",
		ProviderError: "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ID",
		FixDoc:        "`markToolAborted` on the tool part (a tool message without a call is reported only).",
		Fixable:       true,
		Fix:           "markToolAborted",
	})
}
