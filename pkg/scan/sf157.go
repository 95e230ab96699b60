package scan

func init() {
	registerPreflight(&Rule{
		Code:          "SF157",
		Name:          "tool-result-pairing",
		Severity:      Error,
		Summary:       "a tool call sent to anthropic has no result in the next message, or a result has no call",
		What:          "A `tool_use` block of the request has no `tool_result` with its id in the next message, or a `tool_result` answers no `tool_use` of the message before. OpenCode sends every stored tool with its result, so this points to tool ids edited or duplicated by hand or by another tool.",
		Why:           "Anthropic rejects the request on every retry.",
		ProviderError: "messages.N: `tool_use` ids were found without `tool_result` blocks immediately after: ID. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
		FixDoc:        "`markToolAborted` on the tool part (a result without a call is reported only).",
		Fixable:       true,
		Fix:           "markToolAborted",
	})
}
