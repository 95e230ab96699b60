package scan

func init() {
	register(&Rule{
		Code:     "SF301",
		Name:     "stale-in-progress",
		Severity: Warning,
		Summary:  "an assistant message was never finished",
		What: "An assistant message with no `time.completed` and no `error` in a session that has been idle for " +
			"longer than the settle window (`--settle`, default 5s). OpenCode leaves this when it is killed, or " +
			"stopped with Ctrl-C in `opencode run`, in the middle of a turn. A message in a session written to " +
			"within the settle window is still streaming and is not reported, unless the newest time inside the " +
			"session's records is more than a day old (a copied, restored or checked-out session: its file times " +
			"are new, its records are not).",
		Why: "OpenCode shows the turn as still running, with a spinner that never stops, and its tools as running. " +
			"The parts it left behind (empty text, unsigned reasoning, pending tools) are reported by their own " +
			"rules.",
		FixDoc: "`markMessageAborted` gives the message OpenCode's own abort shape (`error: MessageAbortedError` and " +
			"`time.completed`), and SF105's `markToolAborted` is applied to its unfinished tools.",
		Fixable: true,
		Fix:     "markMessageAborted",
		Check:   checkStaleInProgress,
	})
}

func checkStaleInProgress(c *Context) {
	if !Settled(c) {
		return
	}
	for _, m := range c.Session.Messages {
		if m.Role != "assistant" || IsCompleted(m) || ErrorName(m) != "" {
			continue
		}
		f := At(m, nil)
		f.Message = "assistant message was never finished (no time.completed, no error) and the session is idle"
		c.Report(f)
	}
}
