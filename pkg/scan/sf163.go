package scan

func init() {
	registerPreflight(&Rule{
		Code:     "SF163",
		Name:     "reasoning-content-missing",
		Severity: Error,
		Summary:  "a tool call goes to deepseek or kimi in thinking mode without a non-empty reasoning_content",
		What: "On an OpenAI-compatible provider in thinking mode (DeepSeek, Kimi/Moonshot), OpenCode sends an assistant message with tool calls whose `reasoning_content` is missing or empty. " +
			"OpenCode 1.18.33 always sends the field for models its model data marks interleaved (the `deepseek` and `moonshotai` providers, any model id with `deepseek` it does not know), `\"\"` when the step has no reasoning of the current model; " +
			"for the others (a custom provider's `kimi-k2-thinking`, hosts that list the models without `interleaved`) it sends it only when the step has reasoning with text. " +
			"A step the model made without reasoning, or a step of another model (after a switch: OpenCode sends another model's reasoning as text), then goes with `\"\"` or without the field. " +
			"The index is the request's `messages[N]` (the system prompt is 0).\n\n" +
			"What is known: the APIs reject a tool-call message without the field in the current turn (after the last user message), as measured; two client projects report that `\"\"` passes DeepSeek's older \"Missing `reasoning_content` field\" check. " +
			"What is not settled: DeepSeek's current thinking-mode guide says the reasoning of a tool-call turn must be passed back \"in all subsequent requests\", Kimi reports the error at indexes far back in the history, and nobody shows `\"\"` passing DeepSeek's V4 check. " +
			"So sessfix assumes the strictest of these readings when it repairs, and says which reading a finding depends on: a step sent without the field is an error in the turn OpenCode continues without a new prompt and a warning before it (rejected only if the provider checks every turn); " +
			"a step sent with `\"\"` is a warning in every turn (valid only if the provider accepts an empty `reasoning_content`). " +
			"Assumed, not verified against the live APIs: that an empty `reasoning_content`, where it is refused, is refused with the same texts as a missing one (below), " +
			"and that any non-empty reasoning text counts as passed back (DeepSeek's and Kimi's reasoning carries no signature, so nothing ties it to the turn that produced it).",
		Why:           "The provider rejects the request on every retry; sessions reported as bricked on DeepSeek and Kimi fail this way.",
		ProviderError: "thinking is enabled but reasoning_content is missing in assistant tool call message at index N (Kimi) / Missing `reasoning_content` field in the assistant message at message index N. … (DeepSeek) / The `reasoning_content` in the thinking mode must be passed back to the API. (DeepSeek V4)",
		FixDoc: "`prependThinkingPart` on every such step: a synthetic reasoning part reading \"(reasoning not recorded)\" at the start of the step, so OpenCode sends a non-empty `reasoning_content` and the tool call and its output stay in the request; " +
			"a step of another model is first marked as the current model's (`adoptCurrentModel`: its `providerID`/`modelID`), since OpenCode sends another model's reasoning as text. " +
			"This is valid under every reading above (DeepSeek's and Kimi's reasoning is not signed, so nothing checks where it came from), as proven against real OpenCode 1.18.33 and a mock under each reading (docs/compatibility.md). " +
			"`excludeMessage` (OpenCode stops sending the turn, its tool calls and outputs with it) is the fallback when a step cannot be given a part.",
		Fixable: true,
		Fix:     "prependThinkingPart",
	})
}
