package scan

import (
	"fmt"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF152 = preflightRule(&Rule{
	Code:          SF152,
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

func errExpectedThinking(n int, found string) string {
	return fmt.Sprintf("messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%s`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking", n, found)
}

func checkThinkingMode(s *store.Session, r, final *sent.Request) []Violation {
	if r.Thinking {
		n := r.FinalToolLoop()
		if n < 0 || len(r.Messages[n].Blocks) == 0 {
			return nil
		}
		first := r.Messages[n].Blocks[0]
		if isThinkingBlock(first.Type) {
			return nil
		}
		fix := "excludeMessage"
		if msg := s.Message(first.MessageID); msg != nil && opencode.OwnsSignedThinking(msg) {
			fix = "moveThinkingFirst"
		}
		v := Violation{
			Code: SF152, N: n, M: 0, Index: idx(n, 0), ProviderError: errExpectedThinking(n, first.Type),
			MessageID: first.MessageID, PartID: first.PartID, Fix: fix,
			Message: fmt.Sprintf("the final tool-loop assistant message starts with %s, not signed thinking, while thinking is on", first.Type),
		}
		for _, d := range r.Messages[n].Dropped {
			if d.MessageID == first.MessageID {
				v.Message += "; its thinking has no signature and is dropped"
				break
			}
		}
		return []Violation{v}
	}
	n, pm, ok := final.LastAssistant()
	if !ok {
		return nil
	}
	for m, b := range pm.Blocks {
		if isThinkingBlock(b.Type) {
			return []Violation{{
				Code: SF156, N: n, M: m, Index: idx(n, m), ProviderError: fmt.Sprintf("messages.%d.content.%d: %s", n, m, textThinkingDisabled),
				MessageID: b.MessageID, PartID: b.PartID, Fix: "stripThinkingParts", Severity: Warning,
				Message: "the history ends with an assistant message that holds thinking while thinking is off for " + r.ModelID,
			}}
		}
	}
	return nil
}
