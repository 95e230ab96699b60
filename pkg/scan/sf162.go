package scan

import (
	"fmt"
	"strings"

	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF162 = preflightRule(&Rule{
	Code:          SF162,
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

func errOpenAIMissingToolMessages(ids []string) string {
	return "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: " + strings.Join(ids, ", ")
}

const errOpenAIOrphanTool = "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."

func checkOpenAIPairing(_ *store.Session, r *sent.Request) []Violation {
	if r.Kind == sent.Responses {
		return checkResponsesPairing(r)
	}
	var out []Violation
	for n, pm := range r.Messages {
		switch pm.Role {
		case "assistant":
			answered := map[string]bool{}
			for k := n + 1; k < len(r.Messages) && r.Messages[k].Role == "tool"; k++ {
				for _, b := range r.Messages[k].Blocks {
					answered[b.ToolUseID] = true
				}
			}
			var missing []string
			var first *sent.Block
			for m := range pm.Blocks {
				b := &pm.Blocks[m]
				if b.Type == "tool_use" && !answered[b.ToolUseID] {
					missing = append(missing, b.ToolUseID)
					if first == nil {
						first = b
					}
				}
			}
			if len(missing) > 0 {
				out = append(out, Violation{
					Code: SF162, N: n, M: -1, Index: r.Index(n, -1), ProviderError: errOpenAIMissingToolMessages(missing),
					MessageID: first.MessageID, PartID: first.PartID, Fix: "markToolAborted",
					Message: "tool call is sent without a tool message answering it",
				})
			}
		case "tool":
			k := n - 1
			for k >= 0 && r.Messages[k].Role == "tool" {
				k--
			}
			id := pm.Blocks[0].ToolUseID
			if k < 0 || r.Messages[k].Role != "assistant" || !hasBlock(r.Messages[k], "tool_use", id) {
				out = append(out, Violation{
					Code: SF162, N: n, M: -1, Index: r.Index(n, -1), ProviderError: errOpenAIOrphanTool,
					MessageID: pm.Blocks[0].MessageID, PartID: pm.Blocks[0].PartID,
					Message: "tool message is sent without the tool call it answers",
				})
			}
		}
	}
	return out
}

// checkResponsesPairing is the Responses API's rule: every function_call
// item has a function_call_output item with its call id after it, and every
// output a call before it.
func checkResponsesPairing(r *sent.Request) []Violation {
	var out []Violation
	has := func(items []sent.Message, role, id string) bool {
		for _, pm := range items {
			if pm.Role == role && len(pm.Blocks) == 1 && pm.Blocks[0].ToolUseID == id {
				return true
			}
		}
		return false
	}
	for n, pm := range r.Messages {
		if len(pm.Blocks) != 1 {
			continue
		}
		b := pm.Blocks[0]
		switch {
		case pm.Role == "function_call" && !has(r.Messages[n+1:], "function_call_output", b.ToolUseID):
			out = append(out, Violation{
				Code: SF162, N: n, M: -1, Index: r.Index(n, -1), ProviderError: fmt.Sprintf("No tool output found for function call %s.", b.ToolUseID),
				MessageID: b.MessageID, PartID: b.PartID, Fix: "markToolAborted",
				Message: "function call is sent without its output",
			})
		case pm.Role == "function_call_output" && !has(r.Messages[:n], "function_call", b.ToolUseID):
			out = append(out, Violation{
				Code: SF162, N: n, M: -1, Index: r.Index(n, -1), ProviderError: fmt.Sprintf("No tool call found for function call output with call_id %s.", b.ToolUseID),
				MessageID: b.MessageID, PartID: b.PartID,
				Message: "function call output is sent without the call it answers",
			})
		}
	}
	return out
}
