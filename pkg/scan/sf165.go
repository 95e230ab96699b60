package scan

import (
	"fmt"

	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF165 = preflightRule(&Rule{
	Code:     SF165,
	Name:     "foreign-tool-call-id",
	Severity: Error,
	Summary:  "a tool call id another provider minted goes to a mistral model, which takes only nine letters or digits",
	What: "The session's next request goes to a Mistral model (a model id naming mistral, magistral, ministral, devstral, codestral, pixtral or mixtral) through an OpenAI-compatible endpoint, " +
		"and its history holds tool calls whose ids another provider minted (Anthropic's `toolu_…`, OpenAI's `call_…`): OpenCode stores the id the provider gave a call as the tool part's `callID` " +
		"and sends it as the call's `id` and its result's `tool_call_id`. Mistral takes only ids of exactly nine letters or digits. " +
		"OpenCode 1.18.33 rewrites the ids into that form itself for the provider `mistral` and for model ids naming mistral, devstral, codestral, pixtral or mixtral, so the rule fires for the others: " +
		"magistral and ministral models, or any Mistral model under a provider id and model id that name none of those. " +
		"The index is the request's `messages[N]` (the system prompt is 0).",
	Why:           "Mistral rejects the request on every retry, after a switch of model in the middle of a session.",
	ProviderError: "Tool call id was toolu_… but must be a-z, A-Z, 0-9, with a length of 9.",
	FixDoc: "`rekeyCallIDs` gives every tool part whose `callID` is not nine letters or digits a new one: nine letters and digits of a hash of the old id, unique in the session. " +
		"The call and its result are one part in OpenCode's storage, so they keep sharing the id; such an id also fits Anthropic's pattern for tool ids (letters, digits, `_` and `-`, which OpenCode enforces itself for Claude models) and OpenAI's free-form call ids. Proven against real OpenCode 1.18.33 and the strict mock (docs/compatibility.md, `anthropic-then-magistral`).",
	Fixable: true,
	Fix:     "rekeyCallIDs",
})

func errMistralCallID(id string) string {
	return fmt.Sprintf("Tool call id was %s but must be a-z, A-Z, 0-9, with a length of 9.", id)
}

// checkMistralCallIDs is Mistral's rule on tool call ids: every call id
// and every result's tool_call_id is nine letters or digits. The request
// carries the ids as OpenCode sends them (rewritten already for the models
// it knows as Mistral's). One violation per stored tool part, in request
// order; Mistral names the first.
func checkMistralCallIDs(_ *store.Session, r *sent.Request) []Violation {
	if r.Kind != sent.Chat || !sent.IsMistral(r.ProviderID, r.ModelID) {
		return nil
	}
	var out []Violation
	seen := map[string]bool{}
	for n, pm := range r.Messages {
		for k, b := range pm.Blocks {
			if (b.Type != "tool_use" && b.Type != "tool_result") || sent.ValidMistralCallID(b.ToolUseID) || seen[b.PartID] {
				continue
			}
			seen[b.PartID] = true
			out = append(out, Violation{
				Code: SF165, N: n, M: k, Index: r.Index(n, -1), ProviderError: errMistralCallID(b.ToolUseID),
				MessageID: b.MessageID, PartID: b.PartID, Fix: "rekeyCallIDs",
				Message: fmt.Sprintf("the tool call id %s goes to %s/%s, which takes only nine letters or digits", b.ToolUseID, r.ProviderID, r.ModelID),
			})
		}
	}
	return out
}
