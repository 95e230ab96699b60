package opencode

import "github.com/sessfix/sessfix/pkg/store"

// ToolAbortedText is the error OpenCode writes on a tool it aborts, also on
// a call the output limit cut off before its input was complete.
const ToolAbortedText = "Tool execution aborted"

// LengthCutTools returns the tool parts of an assistant message that the
// output limit cut off and that are not yet marked so: on a step that ended
// with finish "length", pending, running, closed with OpenCode's abort text,
// or not completed with an input that is not a JSON object.
func LengthCutTools(m *store.Message) []*store.Part {
	var out []*store.Part
	msgLength := m.Get("finish").String() == "length"
	for _, st := range StepRanges(m) {
		parts := m.Parts[st[0]:st[1]]
		length := msgLength
		for _, p := range parts {
			if p.Type == "step-finish" {
				length = p.Get("reason").String() == "length"
			}
		}
		if !length {
			continue
		}
		for _, p := range parts {
			if CutByLength(p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// CutByLength reports a tool part whose state shows a call cut off while its
// input streamed, once its step is known to have ended with finish
// "length".
func CutByLength(p *store.Part) bool {
	if p.Type != "tool" {
		return false
	}
	switch p.Get("state.status").String() {
	case "pending", "running":
		return true
	case "error":
		return p.Get("state.error").String() == ToolAbortedText || !InputIsObject(p)
	}
	return false
}

// InputIsObject reports a tool part whose state.input is a JSON object (or
// absent: OpenCode then sends {}).
func InputIsObject(p *store.Part) bool {
	in := p.Get("state.input")
	return !in.Exists() || in.IsObject()
}

// CutToolInputs returns the tool parts of a message a tool_input_truncated
// error is about: those the output limit cut off (LengthCutTools) and any
// other unfinished or failed call whose input is not a JSON object.
func CutToolInputs(m *store.Message) []*store.Part {
	out := LengthCutTools(m)
	seen := map[*store.Part]bool{}
	for _, p := range out {
		seen[p] = true
	}
	for _, p := range m.Parts {
		if p.Type == "tool" && !seen[p] && !InputIsObject(p) && p.Get("state.status").String() != "completed" {
			out = append(out, p)
		}
	}
	return out
}
