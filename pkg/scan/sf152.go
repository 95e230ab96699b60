package scan

func init() {
	registerPreflight(&Rule{
		Code:          "SF152",
		Name:          "final-tool-loop-without-thinking",
		Severity:      Error,
		Summary:       "the final tool-loop assistant message does not start with thinking while thinking is on",
		What:          "Thinking is on for the session's model, the request ends inside a tool loop (its last user message carries tool results) and the assistant message with those tool calls does not start with a thinking block. Usually its reasoning had no signature and was dropped, or the reasoning came from another model, or it was stored after the tool call.",
		Why:           "Anthropic requires the final assistant message of a tool loop to start with the signed thinking it produced; the request is rejected on every retry.",
		ProviderError: "messages.N.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks).",
		FixDoc:        "`moveThinkingFirst` when the message owns a signed thinking part; otherwise `excludeMessage` closes the turn so OpenCode stops sending it. A thinking block cannot be invented: a synthetic one has no valid signature.",
		Fixable:       true,
		Fix:           "moveThinkingFirst|excludeMessage",
	})
}
