package scan

import (
	"fmt"

	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF166 = preflightRule(&Rule{
	Code:     SF166,
	Name:     "tool-use-id-refused",
	Severity: Error,
	Summary:  "a tool call goes to an anthropic model with an empty id, or one an earlier call has too",
	What: "On an Anthropic provider, the request sends a `tool_use` whose id is empty, or the same id as an earlier `tool_use` of the request. " +
		"OpenCode sends a tool part's `callID` as the call's id (rewriting the bytes the API does not take to `_` for a Claude model), and some providers give calls no id " +
		"(a part stored with `callID: \"\"`) or ids that repeat from one answer to the next (Kimi K2's `functions.read:0`): after a switch to Claude, the history carries them. " +
		"The API answers an empty id with `messages.N.content.M.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'` and a repeated one with " +
		"``messages.N.content.M: `tool_use` ids must be unique`` (users' reports, anomalyco/opencode#1279). An id repeated within one message is an error; one repeated from an " +
		"earlier message is a warning: whether the API checks ids across messages is not known.",
	Why:           "The API rejects the request on every retry: the session is dead after the switch of model.",
	ProviderError: "messages.1.content.2: `tool_use` ids must be unique",
	FixDoc: "`rekeyToolUseIDs` gives every tool part whose id is empty or repeats an earlier call's a new id of its own (`toolu_sessfix_` and the part's id); the first call keeps its id. " +
		"The call and its result are one part in OpenCode's storage, so they keep sharing the id; nothing else of the part changes, and `sessfix undo` puts the old ids back.",
	Fixable: true,
	Fix:     "rekeyToolUseIDs",
})

// errToolUseIDPattern and errToolUseIDUnique are the Messages API's
// answers to an empty tool_use id and to a repeated one.
func errToolUseIDPattern(n, m int) string {
	return fmt.Sprintf("messages.%d.content.%d.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'", n, m)
}

func errToolUseIDUnique(n, m int) string {
	return fmt.Sprintf("messages.%d.content.%d: `tool_use` ids must be unique", n, m)
}

// checkToolUseIDs is the Messages API's rule on tool_use ids, on the ids
// as OpenCode sends them: each matches ^[a-zA-Z0-9_-]+$ and no two are
// the same. One violation per tool_use that breaks it, in request order.
func checkToolUseIDs(_ *store.Session, r *sent.Request) []Violation {
	var out []Violation
	first := map[string]int{} // id → the entry of its first tool_use
	for n, pm := range r.Messages {
		for m, b := range pm.Blocks {
			if b.Type != "tool_use" {
				continue
			}
			v := Violation{Code: SF166, N: n, M: m, Index: idx(n, m), MessageID: b.MessageID, PartID: b.PartID, Fix: "rekeyToolUseIDs"}
			at, seen := first[b.ToolUseID]
			switch {
			case b.ToolUseID == "" || sent.ClaudeToolID(b.ToolUseID) != b.ToolUseID:
				v.ProviderError = errToolUseIDPattern(n, m)
				v.Message = fmt.Sprintf("a tool call goes to %s/%s with the id %q, which is not letters, digits, _ and -", r.ProviderID, r.ModelID, b.ToolUseID)
			case seen:
				v.ProviderError = errToolUseIDUnique(n, m)
				v.Message = fmt.Sprintf("a tool call goes to %s/%s with the id %s, which an earlier call of the request has too", r.ProviderID, r.ModelID, b.ToolUseID)
				if at != n {
					v.Severity = Warning
					v.Message += " (in an earlier message: whether the API checks ids across messages is not known)"
				}
			default:
				first[b.ToolUseID] = n
				continue
			}
			out = append(out, v)
		}
	}
	return out
}
