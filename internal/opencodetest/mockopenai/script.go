package mockopenai

import (
	"fmt"
	"strings"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/mockstream"
)

// Block types of a scripted answer.
const (
	BlockReasoning = "reasoning"
	BlockText      = "text"
	BlockToolCall  = "tool_call"
)

// Block is one piece of a scripted answer, in stream order.
type Block struct {
	// Type is BlockReasoning, BlockText or BlockToolCall.
	Type string
	// Text is the reasoning (Chat: reasoning_content; Responses: the
	// reasoning summary) or the text.
	Text string
	// ToolName, CallID and ToolInput describe a tool call. An empty CallID
	// gets a fresh "call_…" id.
	ToolName  string
	CallID    string
	ToolInput any
	// Encrypted overrides a Responses reasoning item's encrypted content
	// ("" issues content bound to the request's account and model).
	Encrypted string
}

// Turn is a scripted answer to one request.
type Turn struct {
	// Error, when set, is answered instead of a stream.
	Error *APIError
	// Blocks are streamed in order.
	Blocks []Block
	// EventDelay overrides the server's delay between stream events.
	EventDelay time.Duration
	// CutOff makes the Responses stream hit the output limit inside its
	// last function call: half of its arguments are streamed, the call is
	// never done, and the response ends `response.incomplete` with
	// `incomplete_details.reason: "max_output_tokens"`, as OpenAI ends a
	// response cut by max_output_tokens.
	CutOff bool
}

// Script chooses the answer to an accepted request.
type Script func(r *Request) Turn

// Prompt markers understood by DefaultScript.
const (
	// MarkerNoReasoning makes the answer carry no reasoning even when the
	// request asks for it (a thinking model that skipped thinking).
	MarkerNoReasoning = "[[no-reasoning]]"
)

// Conversation is what a script reads from a request, whatever its API.
type Conversation struct {
	// Prompt is the text of the last user message.
	Prompt string
	// ToolResults are the outputs answering the model's latest tool calls,
	// when the request ends with them (the model is in a tool loop).
	ToolResults []string
	// Reasoning is true when the request asks for reasoning (Chat: thinking
	// mode; Responses: a reasoning config).
	Reasoning bool
}

// DefaultScript answers like a reasoning model would:
//   - when the request ends with tool results: reasoning, then text quoting
//     the first result;
//   - when the last user text contains "[[tool:NAME ARGS]]" (NAME "bash" runs
//     ARGS as the command): reasoning, then a tool call;
//   - otherwise: reasoning, then a text reply.
//
// Reasoning is only sent when the request asks for it. A request without
// tools (OpenCode's title request) gets a short text.
func DefaultScript(r *Request) Turn {
	c := r.Parsed.Conversation()
	var blocks []Block
	think := func(text string) {
		if c.Reasoning && !strings.Contains(c.Prompt, MarkerNoReasoning) {
			blocks = append(blocks, Block{Type: BlockReasoning, Text: text})
		}
	}
	if !r.Chat {
		return Turn{Blocks: []Block{{Type: BlockText, Text: "Mock session title"}}}
	}
	if len(c.ToolResults) > 0 {
		think("The tool returned; I will report its output to the user.")
		return Turn{Blocks: append(blocks, Block{Type: BlockText, Text: fmt.Sprintf("The command finished. Its output was: %s", mockstream.Excerpt(strings.TrimSpace(c.ToolResults[0])))})}
	}
	if calls := mockstream.ToolMarkers(c.Prompt); len(calls) > 0 {
		think(fmt.Sprintf("The user asked me to use the %s tool. I will call it now.", calls[0].Name))
		for _, tc := range calls {
			blocks = append(blocks, Block{Type: BlockToolCall, ToolName: tc.Name, ToolInput: tc.Input})
		}
		return Turn{Blocks: blocks}
	}
	think("The user sent a message. I should answer it briefly and helpfully, in a few sentences.")
	return Turn{Blocks: append(blocks, Block{Type: BlockText, Text: "Mock reply: I read your message and here is a short answer in several words so that it streams in more than one delta."})}
}

// Conversation reads the request's prompt, pending tool results and
// reasoning setting.
func (p *Parsed) Conversation() Conversation {
	switch {
	case p == nil:
	case p.Completions != nil:
		return p.Completions.conversation(p.Thinking)
	case p.Responses != nil:
		return p.Responses.conversation()
	}
	return Conversation{}
}
