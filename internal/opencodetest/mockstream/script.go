package mockstream

import (
	"encoding/json"
	"regexp"
)

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
