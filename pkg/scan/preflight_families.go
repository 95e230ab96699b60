package scan

import (
	"github.com/sessfix/sessfix/pkg/sent"
)

// The rules of the providers reached through OpenAI's APIs: Chat
// Completions with thinking (DeepSeek, Kimi/Moonshot) and Responses. Their
// texts are the APIs' own (provider-rules.md; internal/opencodetest/mockopenai prints
// them the same way).

// emptyOnly ends the message of a step sent with reasoning_content "".
const emptyOnly = "valid only if the provider accepts an empty reasoning_content, which is not known for its thinking mode"

// firstCall is an entry's first tool call (nil for none).
func firstCall(pm sent.Message) *sent.Block {
	for m := range pm.Blocks {
		if pm.Blocks[m].Type == "tool_use" {
			return &pm.Blocks[m]
		}
	}
	return nil
}

// lastUserEntry is the index of the request's last user entry, or of the
// last one built from a stored message (-1 for none).
func lastUserEntry(r *sent.Request, stored bool) int {
	for n := len(r.Messages) - 1; n >= 0; n-- {
		if r.Messages[n].Role == "user" && (!stored || len(r.Messages[n].Sources) > 0) {
			return n
		}
	}
	return -1
}
