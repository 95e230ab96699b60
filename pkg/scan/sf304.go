package scan

import "github.com/sessfix/sessfix/pkg/opencode"

var ruleSF304 = &Rule{
	Code:      SF304,
	Name:      "failed-compaction",
	Severity:  Error,
	Lower:     Warning,
	LowerWhen: "a failure whose stored error says a retry may succeed",
	Summary:   "a compaction failed and opencode runs it again before every prompt",
	What: "The session's newest compaction request (a user message with a `compaction` part, `auto: true` when " +
		"OpenCode started it after a context overflow, or `/compact`) has no finished summary: the newest assistant " +
		"message after it is its summary message (`summary: true`, agent `compaction`) with a stored error and no " +
		"`finish`. OpenCode 1.18.33 stores this when the provider refuses the compaction request with an error " +
		"that is not a context overflow (an overflow it gives up on itself: `finish: \"error\"`, " +
		"\"Conversation history too large to compact\"): an `APIError`, a model the compaction agent cannot " +
		"reach, or a context-window error whose wording OpenCode does not recognise (Anthropic's " +
		"\"input length and `max_tokens` exceed context limit\"). A compaction still being written (its summary " +
		"has no error yet) is not reported; one OpenCode was killed in is SF301's, at info (OpenCode runs it again " +
		"before the next prompt and gets out by itself). The finding is a warning when the stored error says a retry may succeed " +
		"(`error.data.isRetryable`). The stored error is not read as a failed attempt of the history " +
		"(SF302): the request it answers is the compaction's, the history as one text, so an index in it " +
		"says nothing about the messages OpenCode sends (a context overflow OpenCode gave up on stays SF302's).",
	Why: "OpenCode runs a pending compaction before anything else: every prompt starts the same compaction " +
		"again, and while the provider refuses it, the prompt is never answered: the session is stuck in its " +
		"compaction (OpenCode issues #16882 and #27924).",
	ProviderError: "the text stored in the summary message's `error.data.message`, for example: input length and " +
		"`max_tokens` exceed context limit: 187000 + 32000 > 200000, decrease input length or `max_tokens` and " +
		"try again",
	FixDoc: "`finishFailedCompaction` gives the failed summary message the `finish: \"error\"` OpenCode itself " +
		"writes on a compaction it gives up, so the compaction is no longer pending; its error, the " +
		"compaction request and every message stay. The next prompt is sent as a normal turn with the full " +
		"history (a failed summary is never a compaction boundary). If that history is really over the " +
		"model's context window, OpenCode compacts again, and the way out is a shorter history: " +
		"`sessfix rewind` or `fork`.",
	Fixable: true,
	Fix:     "finishFailedCompaction",
	Check:   checkFailedCompaction,
}

func checkFailedCompaction(c *Context) {
	m := opencode.FailedCompaction(c.Session)
	if m == nil {
		return
	}
	f := At(m, nil)
	f.Message = "compaction failed (" + quote(opencode.ErrorName(m)) + ") and runs again before every prompt"
	if opencode.CompactionRetryable(m) {
		f.Severity = Warning
		f.Message += "; the error says a retry may succeed"
	}
	c.Report(f)
}
