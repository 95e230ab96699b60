package mockstream

import (
	"encoding/json"
	"regexp"
	"time"
)

// Block is one content block of a scripted answer, for the mocks whose
// answers are a list of typed blocks (mockanthropic, mockbedrock). Each
// mock names the types: a thinking block, a redacted one, "text" and
// "tool_use".
type Block struct {
	// Type is the block's type in the mock's words.
	Type string
	// Text is the thinking or text content.
	Text string
	// Signature overrides the signature of a thinking block; nil means
	// "sign Text with the server's secret".
	Signature *string
	// ToolName, ToolID and ToolInput describe a tool_use block. An empty
	// ToolID gets a fresh id of the provider's shape.
	ToolName  string
	ToolID    string
	ToolInput any
}

// Turn is a scripted answer of such a mock to one request; E is the mock's
// error answer.
type Turn[E any] struct {
	// Error, when set, is answered instead of a stream.
	Error E
	// Blocks are streamed in order.
	Blocks []Block
	// StopReason defaults to "tool_use" when a block is a tool_use, else
	// "end_turn".
	StopReason string
	// EventDelay overrides the server's delay between events.
	EventDelay time.Duration
}

var toolMarker = regexp.MustCompile(`\[\[tool:(\w+) ([^\]]*)\]\]`)

// ToolCall is a tool call a prompt asks the mock to make.
type ToolCall struct {
	Name  string
	Input any
}

// ToolMarkers returns the tool calls a prompt asks for with markers
// "[[tool:NAME ARGS]]", in order. For NAME "bash", ARGS is the command; for
// other tools ARGS is their JSON input (or, when it is not JSON, the value
// of an "input" field). Several markers ask for parallel calls.
func ToolMarkers(prompt string) []ToolCall {
	var out []ToolCall
	for _, m := range toolMarker.FindAllStringSubmatch(prompt, -1) {
		var input any
		if m[1] == "bash" {
			input = map[string]any{"command": m[2], "description": "Run " + m[2]}
		} else if err := json.Unmarshal([]byte(m[2]), &input); err != nil {
			input = map[string]any{"input": m[2]}
		}
		out = append(out, ToolCall{Name: m[1], Input: input})
	}
	return out
}
