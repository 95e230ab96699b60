package mockanthropic

import (
	"fmt"
	"strings"

	"github.com/sessfix/sessfix/internal/opencodetest/mockstream"
)

// BlockSpec is one content block of a scripted answer: its Type is
// "thinking", "redacted_thinking", "text" or "tool_use"; an empty ToolID
// gets a fresh "toolu_…" id.
type BlockSpec = mockstream.Block

// Turn is a scripted answer to one request.
type Turn = mockstream.Turn[*APIError]

// Script chooses the answer to an accepted request.
type Script func(r *Request) Turn

// Prompt markers understood by DefaultScript.
const (
	// MarkerRedacted makes the answer's thinking a redacted_thinking block.
	MarkerRedacted = "[[redacted]]"
)

// DefaultScript answers like a thinking model would:
//   - when the final user message carries tool results: thinking, then text
//     quoting the first result;
//   - when the last user text contains "[[tool:NAME ARGS]]" (NAME "bash" runs
//     ARGS as the command): thinking, then a tool_use;
//   - otherwise: thinking, then a text reply.
//
// Thinking is only sent when the request enables it. A request without tools
// (OpenCode's title and summary calls) gets a short text.
func DefaultScript(r *Request) Turn {
	req := r.Parsed
	think := req.ThinkingEnabled()
	prompt := req.LastUserText()
	var blocks []BlockSpec
	addThinking := func(text string) {
		if !think {
			return
		}
		if strings.Contains(prompt, MarkerRedacted) {
			blocks = append(blocks, BlockSpec{Type: "redacted_thinking"})
			return
		}
		blocks = append(blocks, BlockSpec{Type: "thinking", Text: text})
	}
	if len(req.Tools) == 0 {
		addThinking("The user wants a short title.")
		return Turn{Blocks: append(blocks, BlockSpec{Type: "text", Text: "Mock session title"})}
	}
	if res := req.PendingToolResults(); len(res) > 0 {
		out := strings.TrimSpace(res[0].ToolResultText())
		addThinking("The tool returned; I will report its output to the user.")
		return Turn{Blocks: append(blocks, BlockSpec{Type: "text", Text: fmt.Sprintf("The command finished. Its output was: %s", mockstream.Excerpt(out))})}
	}
	if calls := mockstream.ToolMarkers(prompt); len(calls) > 0 {
		addThinking(fmt.Sprintf("The user asked me to use the %s tool. I will call it now.", calls[0].Name))
		return Turn{Blocks: append(blocks, BlockSpec{Type: "tool_use", ToolName: calls[0].Name, ToolInput: calls[0].Input})}
	}
	addThinking("The user sent a message. I should answer it briefly and helpfully, in a few sentences.")
	return Turn{Blocks: append(blocks, BlockSpec{Type: "text", Text: "Mock reply: I read your message and here is a short answer in several words so that it streams in more than one delta."})}
}
