package scan

func init() {
	registerPreflight(&Rule{
		Code:     "SF164",
		Name:     "reasoning-without-following-item",
		Severity: Error,
		Summary:  "an openai reasoning item is sent without the call or message it produced",
		What: "On the OpenAI Responses API (the `openai` provider), OpenCode replays a reasoning part that has encrypted content (`metadata.openai.reasoningEncryptedContent`) as a reasoning item, " +
			"and the API requires the function call or message that reasoning produced right after it. " +
			"A kill after the reasoning item was done and before the call arrived leaves a turn that ends with the reasoning, so the next prompt follows it. " +
			"The index is the request's `input[N]` (the developer message is 0); the API names the item by the id in its encrypted content, the part's `metadata.openai.itemId`.",
		Why:           "OpenAI rejects the request on every retry.",
		ProviderError: "Item 'rs_…' of type 'reasoning' was provided without its required following item.",
		FixDoc:        "`dropEncryptedReasoning` removes the encrypted content from that reasoning part, so OpenCode leaves the reasoning item out; else `excludeMessage` on the killed turn. Both were proven against real OpenCode 1.18.33; removing the item id alone does not help.",
		Fixable:       true,
		Fix:           "dropEncryptedReasoning",
	})
}
