package mockbedrock

import (
	"fmt"
	"strings"

	"github.com/sessfix/sessfix/internal/opencodetest/mockstream"
)

// BlockSpec is one content block of a scripted answer: its Type is
// "reasoning", "redacted", "text" or "tool_use"; a Signature pointing to ""
// sends none; an empty ToolID gets a fresh "tooluse_…" id.
type BlockSpec = mockstream.Block

// Turn is a scripted answer to one request.
type Turn = mockstream.Turn[*APIError]

// Script chooses the answer to an accepted request.
type Script func(r *Request) Turn

// BlankTextScript answers the first prompt the way Claude often does on
// Bedrock: reasoning, a whitespace-only text ("\n\n") and a bash call
// (echo hi); later requests get DefaultScript's answers.
func BlankTextScript(r *Request) Turn {
	if r.Chat && len(r.Parsed.Messages) == 1 {
		return Turn{Blocks: []BlockSpec{
			{Type: "reasoning", Text: "I will run it."},
			{Type: "text", Text: "\n\n"},
			{Type: "tool_use", ToolName: "bash", ToolInput: map[string]any{"command": "echo hi", "description": "Run echo hi"}},
		}}
	}
	return DefaultScript(r)
}

// DefaultScript answers like Claude with extended thinking on Bedrock:
//   - when the final user message carries tool results: reasoning, then
//     text quoting the first result;
//   - when the last user text contains "[[tool:NAME ARGS]]" (NAME "bash"
//     runs ARGS as the command): reasoning, then one toolUse per marker;
//   - otherwise: reasoning, then a text reply.
//
// Reasoning is only sent when the request turns thinking on. A request
// without tools (OpenCode's title request) gets a short text.
func DefaultScript(r *Request) Turn {
	req := r.Parsed
	var blocks []BlockSpec
	think := func(text string) {
		if req.ThinkingEnabled() {
			blocks = append(blocks, BlockSpec{Type: "reasoning", Text: text})
		}
	}
	if !req.HasTools() {
		think("The user wants a short title.")
		return Turn{Blocks: append(blocks, BlockSpec{Type: "text", Text: "Mock session title"})}
	}
	if res := req.PendingToolResults(); len(res) > 0 {
		think("The tool returned; I will report its output to the user.")
		return Turn{Blocks: append(blocks, BlockSpec{Type: "text",
			Text: fmt.Sprintf("The command finished. Its output was: %s", mockstream.Excerpt(strings.TrimSpace(res[0].Text())))})}
	}
	if calls := mockstream.ToolMarkers(req.LastUserText()); len(calls) > 0 {
		think(fmt.Sprintf("The user asked me to use the %s tool. I will call it now.", calls[0].Name))
		for _, c := range calls {
			blocks = append(blocks, BlockSpec{Type: "tool_use", ToolName: c.Name, ToolInput: c.Input})
		}
		return Turn{Blocks: blocks}
	}
	think("The user sent a message. I should answer it briefly and helpfully, in a few sentences.")
	return Turn{Blocks: append(blocks, BlockSpec{Type: "text",
		Text: "Mock reply: I read your message and here is a short answer in several words so that it streams in more than one delta."})}
}
