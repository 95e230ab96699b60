package mockgemini

import (
	"fmt"
	"strings"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/mockstream"
)

// Call is a function call of a scripted answer.
type Call struct {
	Name string
	Args any
	// ID is sent as functionCall.id when set; the real Gemini API leaves it
	// out and @ai-sdk/google then makes its own.
	ID string
}

// Turn is a scripted answer to one request: thought summary, then text
// and/or function calls, then the finish chunk.
type Turn struct {
	// Error, when set, is answered instead of a stream.
	Error *APIError
	// Thought is streamed as parts with "thought": true (only when the
	// request sets thinkingConfig.includeThoughts).
	Thought string
	// Text is streamed as text parts.
	Text string
	// Calls are sent in one chunk, as parallel functionCall parts.
	Calls []Call
	// Signature overrides the thought signature: by default the mock signs
	// the first function call, or, without calls, an empty text part after
	// the text, the way Gemini 3 does. A pointer to "" sends none.
	Signature *string
	// FinishReason defaults to STOP.
	FinishReason string
	// EventDelay overrides the server's delay between chunks.
	EventDelay time.Duration
}

// Script chooses the answer to an accepted request.
type Script func(r *Request) Turn

// DefaultScript answers like a thinking Gemini model would:
//   - when the final user content carries function responses: a thought,
//     then text quoting the first response;
//   - when the last user text contains "[[tool:NAME ARGS]]" markers (NAME
//     "bash" runs ARGS as the command): a thought, then one function call
//     per marker (parallel calls when there are several);
//   - otherwise: a thought, then a text reply.
//
// A request without function declarations (OpenCode's title request) gets
// a short text.
func DefaultScript(r *Request) Turn {
	req := r.Parsed
	prompt := req.LastUserText()
	if !req.HasFunctions() {
		return Turn{Thought: "The user wants a short title.", Text: "Mock session title"}
	}
	if res := req.PendingResponses(); len(res) > 0 {
		out := strings.TrimSpace(res[0].Text())
		return Turn{Thought: "The tool returned; I will report its output to the user.",
			Text: fmt.Sprintf("The command finished. Its output was: %s", mockstream.Excerpt(out))}
	}
	if calls := mockstream.ToolMarkers(prompt); len(calls) > 0 {
		t := Turn{Thought: fmt.Sprintf("The user asked me to use the %s tool. I will call it now.", calls[0].Name)}
		for _, c := range calls {
			t.Calls = append(t.Calls, Call{Name: c.Name, Args: c.Input})
		}
		return t
	}
	return Turn{Thought: "The user sent a message. I should answer it briefly and helpfully, in a few sentences.",
		Text: "Mock reply: I read your message and here is a short answer in several words so that it streams in more than one chunk."}
}
