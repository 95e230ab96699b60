package scan

import "github.com/sessfix/sessfix/pkg/opencode"

var ruleSF303 = &Rule{
	Code:     SF303,
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
}

func checkLengthCutTool(c *Context) {
	v := newSentView(c)
	for _, m := range c.Session.Messages {
		// A turn OpenCode no longer sends (excluded, compacted away) cannot
		// mislead the model or fail a request.
		if m.Role != "assistant" || Streaming(c, m) || !v.sent(m) {
			continue
		}
		for _, p := range opencode.LengthCutTools(m) {
			f := At(m, p)
			f.Message = "tool " + quote(p.Get("tool").String()) + " was cut off by the output limit (finish \"length\")"
			if !opencode.InputIsObject(p) {
				f.Severity = Error
				f.Message += " and its input is not a JSON object"
				f.ErrorType = string(opencode.ErrorToolInputTruncated)
			}
			c.Report(f)
		}
	}
}
