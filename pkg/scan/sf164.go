package scan

import (
	"fmt"

	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF164 = preflightRule(&Rule{
	Code:     SF164,
	Name:     "reasoning-without-following-item",
	Severity: Error,
	Summary:  "an openai reasoning item is sent without the call or message it produced",
	What: "On the OpenAI Responses API (the `openai` provider, and GPT models on OpenCode Zen), OpenCode replays a reasoning part that has encrypted content (`metadata.openai.reasoningEncryptedContent`) as a reasoning item, " +
		"and the API requires the function call or message that reasoning produced right after it. " +
		"A kill after the reasoning item was done and before the call arrived leaves a turn that ends with the reasoning, so the next prompt follows it. " +
		"The index is the request's `input[N]` (the developer message is 0); the API names the item by the id in its encrypted content, the part's `metadata.openai.itemId`.",
	Why:           "OpenAI rejects the request on every retry.",
	ProviderError: "Item 'rs_…' of type 'reasoning' was provided without its required following item.",
	FixDoc:        "`dropEncryptedReasoning` removes the encrypted content from that reasoning part, so OpenCode leaves the reasoning item out; else `excludeMessage` on the killed turn. Both were proven against real OpenCode 1.18.33; removing the item id alone does not help.",
	Fixable:       true,
	Fix:           "dropEncryptedReasoning",
})

func errReasoningWithoutFollowing(id string) string {
	return fmt.Sprintf("Item '%s' of type 'reasoning' was provided without its required following item.", id)
}

// checkResponsesReasoning is the Responses API's pairing of a reasoning
// item with the item it produced: a reasoning item (several in a row with
// one id count as one) is followed by a function call or an assistant
// message. OpenCode leaves it alone when a kill came after the reasoning
// item and before the call: the stored turn ends with reasoning that has
// encrypted content, and the next prompt follows it.
func checkResponsesReasoning(_ *store.Session, r *sent.Request) []Violation {
	if r.Kind != sent.Responses {
		return nil
	}
	var out []Violation
	for n := 0; n < len(r.Messages); n++ {
		pm := r.Messages[n]
		if pm.Role != "reasoning" || len(pm.Blocks) != 1 {
			continue
		}
		b := pm.Blocks[0]
		k := n + 1
		for k < len(r.Messages) && r.Messages[k].Role == "reasoning" && b.ItemID != "" && r.Messages[k].Blocks[0].ItemID == b.ItemID {
			k++
		}
		if k < len(r.Messages) && (r.Messages[k].Role == "function_call" || r.Messages[k].Role == "assistant") {
			n = k - 1
			continue
		}
		id := b.ItemID
		if id == "" {
			id = "rs_…"
		}
		out = append(out, Violation{
			Code: SF164, N: n, M: -1, Index: r.Index(n, -1), ProviderError: errReasoningWithoutFollowing(id),
			MessageID: b.MessageID, PartID: b.PartID, Fix: "dropEncryptedReasoning",
			Message: "a reasoning item is sent with its encrypted content but without the call or message it produced (the turn stopped after its reasoning)",
		})
		n = k - 1
	}
	return out
}
