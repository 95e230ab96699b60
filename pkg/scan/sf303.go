package scan

import "github.com/sessfix/sessfix/pkg/store"

// ToolAbortedText is the error OpenCode writes on a tool it aborts, also on
// a call the output limit cut off before its input was complete.
const ToolAbortedText = "Tool execution aborted"

func init() {
	register(&Rule{
		Code:     "SF303",
		Name:     "length-cut-tool-call",
		Severity: Warning,
		Summary:  "a tool call was cut off by the output limit and the model is not told why",
		What: "A tool part on an assistant step that ended with `finish: \"length\"` (the message's `finish`, or the " +
			"`reason` of the step-finish part that closes the tool's step): the model's output hit its length limit " +
			"while it was still writing the call's input. OpenCode stores the call as it was when the stream stopped: " +
			"pending or running, or closed with its abort text (`Tool execution aborted`) and the input it had (often " +
			"`{}`); an input that is not a JSON object (half-written text) is reported at error level, since no " +
			"provider request can carry it. Turns OpenCode no longer sends are not reported.",
		Why: "The model is told only that the call was aborted, so it sends the same oversized call again and is cut " +
			"off again (the loop of OpenCode issues #18108 and #13102). A half-written input fails the next request " +
			"before it reaches the model (`Invalid JSON input for openai-responses tool call patch`, OpenCode issue " +
			"#36766) on every retry.",
		ProviderError: "Invalid JSON input for openai-responses tool call patch",
		FixDoc: "`markToolCutOff` rewrites the tool to OpenCode's own abort shape (status `error`, " +
			"`metadata.interrupted: true`, `time.end`) with an error that says the model's output hit its length limit " +
			"before the input was complete, so the call and its result stay a valid pair and the model sees why; an " +
			"input that is not a JSON object becomes `{}` and its text is kept in `state.metadata.truncatedInput`.",
		Fixable: true,
		Fix:     "markToolCutOff",
		Check:   checkLengthCutTool,
	})
}

func checkLengthCutTool(c *Context) {
	v := newSentView(c)
	for _, m := range c.Session.Messages {
		// A turn OpenCode no longer sends (excluded, compacted away) cannot
		// mislead the model or fail a request.
		if m.Role != "assistant" || Streaming(c, m) || !v.sent(m) {
			continue
		}
		for _, p := range LengthCutTools(m) {
			f := At(m, p)
			f.Message = "tool " + quote(p.Get("tool").String()) + " was cut off by the output limit (finish \"length\")"
			if !InputIsObject(p) {
				f.Severity = Error
				f.Message += " and its input is not a JSON object"
				f.ErrorType = string(ErrorToolInputTruncated)
			}
			c.Report(f)
		}
	}
}

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
