package scan

var ruleSF105 = &Rule{
	Code:     SF105,
	Name:     "unfinished-tool",
	Severity: Warning,
	Summary:  "a tool call was left pending or running",
	What: "A tool part whose state is still `pending` or `running` on a message that is no longer being " +
		"written: the message is completed or has an error, or it is unfinished and OpenCode is no longer " +
		"writing it (see SF301). This is a tool_use without a tool_result, left when OpenCode was killed mid-call.",
	Why: "OpenCode shows the tool as running forever. Current OpenCode versions send it to the model as a failed " +
		"call (\"[Tool execution was interrupted]\"), so the session still works, but any tool that sends the " +
		"history as stored (a tool_use without its tool_result) is rejected. Tools on messages OpenCode never " +
		"sends are reported as info.",
	ProviderError: "`tool_use` ids were found without `tool_result` blocks immediately after",
	FixDoc: "`markToolAborted` rewrites the tool to OpenCode's own abort shape: status `error`, error " +
		"`Tool execution aborted`, `metadata.interrupted: true` and `time.end`.",
	Fixable: true,
	Fix:     "markToolAborted",
	Check:   checkUnfinishedTool,
}

func checkUnfinishedTool(c *Context) {
	v := newSentView(c)
	for _, m := range c.Session.Messages {
		if Streaming(c, m) {
			continue
		}
		for _, p := range m.Parts {
			if p.Type != "tool" {
				continue
			}
			status := p.Get("state.status").String()
			if status != "pending" && status != "running" {
				continue
			}
			f := At(m, p)
			f.Message = "tool " + quote(p.Get("tool").String()) + " is still " + status + " on a message that is no longer being written"
			if !v.sent(m) {
				f.Severity = Info
			}
			c.Report(f)
		}
	}
}

// quote renders a name from a record for a finding message.
func quote(s string) string {
	if s == "" {
		return "(unnamed)"
	}
	return "\"" + s + "\""
}
