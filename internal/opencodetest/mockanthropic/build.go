package mockanthropic

import (
	"encoding/json"

	"github.com/sessfix/sessfix/internal/opencodetest/mockstream"
)

// Built is a block of a scripted answer made ready to send.
type Built struct {
	Spec BlockSpec
	// Signature is a thinking block's signature.
	Signature string
	// Data is a redacted block's opaque payload.
	Data string
	// ID and InputJSON are a tool_use block's id and encoded input.
	ID        string
	InputJSON string
}

// Blocks names the block types of an answer made of Claude's blocks and
// makes its tool ids: Messages here, Bedrock's Converse in mockbedrock.
type Blocks struct {
	Thinking, Redacted string
	ToolID             func() string
}

// Messages is the Messages API's naming.
var Messages = Blocks{Thinking: "thinking", Redacted: "redacted_thinking",
	ToolID: func() string { return mockstream.NewID("toolu_") }}

// Build makes blocks ready to send, thinking signed with secret, and
// returns them with the stop reason: stop when set, else "tool_use" when a
// block is a tool_use, else "end_turn".
func (k Blocks) Build(blocks []BlockSpec, stop string, secret []byte) ([]Built, string) {
	out := make([]Built, 0, len(blocks))
	for _, b := range blocks {
		x := Built{Spec: b}
		switch b.Type {
		case k.Thinking:
			if b.Signature != nil {
				x.Signature = *b.Signature
			} else {
				x.Signature = Sign(secret, b.Text)
			}
		case k.Redacted:
			x.Data = RedactedData(secret)
		case "tool_use":
			x.ID = b.ToolID
			if x.ID == "" {
				x.ID = k.ToolID()
			}
			in := b.ToolInput
			if in == nil {
				in = map[string]any{}
			}
			j, _ := json.Marshal(in)
			x.InputJSON = string(j)
			if stop == "" {
				stop = "tool_use"
			}
		}
		out = append(out, x)
	}
	if stop == "" {
		stop = "end_turn"
	}
	return out, stop
}
