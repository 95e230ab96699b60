package scan

func init() {
	registerPreflight(&Rule{
		Code:     "SF163",
		Name:     "reasoning-content-missing",
		Severity: Error,
		Summary:  "a tool call goes to deepseek or kimi in thinking mode without its reasoning_content",
		What: "On an OpenAI-compatible provider in thinking mode (DeepSeek, Kimi/Moonshot), OpenCode sends an assistant message with tool calls but no `reasoning_content`. " +
			"OpenCode 1.18.33 always sends the field (`\"\"` when empty) for models its model data marks interleaved (the `deepseek` and `moonshotai` providers, any model id with `deepseek` it does not know); " +
			"for the others (a custom provider's `kimi-k2-thinking`, hosts that list the models without `interleaved`) it sends it only when the step has reasoning with text. " +
			"A step the model made without reasoning, or a step of another model (whose reasoning OpenCode sends as text), then goes without it. " +
			"The index is the request's `messages[N]` (the system prompt is 0). It is a warning for turns before the last user message (the APIs are measured to check only the current turn; a provider that checks every turn rejects them) and an error for the turn OpenCode continues without a new prompt.",
		Why:           "The provider rejects the request on every retry; sessions reported as bricked on DeepSeek and Kimi fail this way.",
		ProviderError: "thinking is enabled but reasoning_content is missing in assistant tool call message at index N (Kimi) / Missing `reasoning_content` field in the assistant message at message index N. … (DeepSeek) / The `reasoning_content` in the thinking mode must be passed back to the API. (DeepSeek V4)",
		FixDoc:        "`excludeMessage` on every assistant turn OpenCode sends without it (the turn, its tool calls and outputs stay visible, and OpenCode stops sending them), as proven against real OpenCode 1.18.33; adding reasoning text to another model's turn does not help, since OpenCode sends it as text.",
		Fixable:       true,
		Fix:           "excludeMessage",
	})
}
