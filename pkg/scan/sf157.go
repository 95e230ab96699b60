package scan

import (
	"fmt"
	"strings"

	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF157 = preflightRule(&Rule{
	Code:          SF157,
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

func errToolUseWithoutResult(n int, ids []string) string {
	return fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", n, strings.Join(ids, ", "))
}

func errUnexpectedToolResult(n, m int, id string) string {
	return fmt.Sprintf("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", n, m, id)
}

func checkToolPairing(_ *store.Session, r *sent.Request) []Violation {
	var out []Violation
	last := len(r.Messages) - 1
	for n, pm := range r.Messages {
		switch pm.Role {
		case "assistant":
			var missing []string
			var first *sent.Block
			for m := range pm.Blocks {
				b := &pm.Blocks[m]
				if b.Type != "tool_use" {
					continue
				}
				if n == last || r.Messages[n+1].Role != "user" || !hasBlock(r.Messages[n+1], "tool_result", b.ToolUseID) {
					missing = append(missing, b.ToolUseID)
					if first == nil {
						first = b
					}
				}
			}
			if len(missing) > 0 {
				out = append(out, Violation{
					Code: SF157, N: n, M: -1, Index: idx(n, -1), ProviderError: errToolUseWithoutResult(n, missing),
					MessageID: first.MessageID, PartID: first.PartID, Fix: "markToolAborted",
					Message: "tool call is sent without its result in the next message",
				})
			}
		case "user":
			for m, b := range pm.Blocks {
				if b.Type != "tool_result" {
					continue
				}
				if n == 0 || r.Messages[n-1].Role != "assistant" || !hasBlock(r.Messages[n-1], "tool_use", b.ToolUseID) {
					out = append(out, Violation{
						Code: SF157, N: n, M: m, Index: idx(n, m), ProviderError: errUnexpectedToolResult(n, m, b.ToolUseID),
						MessageID: b.MessageID, PartID: b.PartID,
						Message: "tool result is sent without its tool call in the message before",
					})
				}
			}
		}
	}
	return out
}
