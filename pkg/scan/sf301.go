package scan

import "github.com/sessfix/sessfix/pkg/opencode"

var ruleSF301 = &Rule{
	Code:     SF301,
	Name:     "stale-in-progress",
	Severity: Warning,
	Summary:  "an assistant message was never finished",
	What: "An assistant message with no `time.completed` and no `error` that OpenCode is no longer writing. " +
		"OpenCode leaves this when it is killed, or stopped with Ctrl-C in `opencode run`, in the middle of a " +
		"turn. Only the session's newest assistant message can still be streaming, and it is not reported " +
		"while it is (docs/fixing.md, \"Sessions in use\"): while the session changed within the settle " +
		"window (`--settle`, default 5s), and after that while another program (OpenCode) has the store open, " +
		"for up to the abandon window (10 minutes). An older unfinished message, or one in a store no other " +
		"program has open, is reported at once; file times of a copied, restored or checked-out session " +
		"(records more than a day old) are not taken as activity. The summary message of a compaction OpenCode 1.18 " +
		"was killed in, while that compaction is still the session's newest, is reported as info only: OpenCode " +
		"runs the compaction again before the next prompt and gets out by itself, and closing the summary would " +
		"turn it into a failed compaction (SF304). Once a later compaction finished, it is an ordinary unfinished " +
		"message.",
	Why: "OpenCode shows the turn as still running, with a spinner that never stops, and its tools as running. " +
		"The parts it left behind (empty text, unsigned reasoning, pending tools) are reported by their own " +
		"rules.",
	FixDoc: "`markMessageAborted` gives the message OpenCode's own abort shape (`error: MessageAbortedError` and " +
		"`time.completed`), and SF105's `markToolAborted` is applied to its unfinished tools.",
	Fixable: true,
	Fix:     "markMessageAborted",
	Check:   checkStaleInProgress,
}

func checkStaleInProgress(c *Context) {
	stopped := opencode.StoppedCompaction(c.Session)
	for _, m := range c.Session.Messages {
		if m.Role != "assistant" || opencode.IsCompleted(m) || opencode.ErrorName(m) != "" || Streaming(c, m) {
			continue
		}
		f := At(m, nil)
		f.Message = "assistant message was never finished (no time.completed, no error)"
		if m == stopped {
			// Closed, the summary would be a failed compaction (SF304);
			// left as it is, the next prompt runs the compaction again.
			f.Severity = Info
			f.Message = "the summary of a compaction opencode was stopped in was never finished; opencode runs the compaction again before the next prompt"
		}
		c.Report(f)
	}
}
