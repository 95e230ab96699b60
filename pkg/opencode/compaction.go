package opencode

import (
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// CompactionFinishError is the `finish` OpenCode 1.18 writes on a
// compaction's summary message when it gives the compaction up (a
// compaction request over the context window: ContextOverflowError
// "Conversation history too large to compact"). A summary message with a
// finish is a finished turn: OpenCode no longer runs its compaction again.
const CompactionFinishError = "error"

// PendingCompaction reads the session the way OpenCode 1.18's prompt loop
// does before each turn: from the newest message back to the newest
// assistant message with a `finish`, a user message with a `compaction`
// part on the way is a compaction still to run, which OpenCode runs before
// anything else, on every prompt, until a summary message after it
// finishes. It returns that compaction request (nil when there is none)
// and the newest assistant message after it (nil when there is none yet).
func PendingCompaction(s *store.Session) (request, newest *store.Message) {
	for i := len(s.Messages) - 1; i >= 0; i-- {
		m := s.Messages[i]
		switch m.Role {
		case "assistant":
			if m.Get("finish").String() != "" {
				return nil, nil
			}
			if newest == nil {
				newest = m
			}
		case "user":
			if hasCompactionPart(m) {
				return m, newest
			}
		}
	}
	return nil, nil
}

// FailedCompaction returns the summary message of a pending compaction
// (PendingCompaction) whose last run failed: the newest assistant message
// after the compaction request is a summary (`summary: true`) that stored
// an error and no `finish`. OpenCode runs the compaction again on the next
// prompt, before the user's message is answered; while the provider
// refuses the compaction request the same way, no prompt is answered. A
// compaction still being written (no error yet), or killed (left to
// SF301), is not a failed one: nil.
func FailedCompaction(s *store.Session) *store.Message {
	req, newest := PendingCompaction(s)
	if req == nil || newest == nil || !newest.Get("summary").Bool() || ErrorName(newest) == "" {
		return nil
	}
	return newest
}

// StoppedCompaction returns the summary message of a pending compaction
// (PendingCompaction) that was never finished: the newest assistant message
// after the compaction request is a summary with no `time.completed`, no
// error and no `finish`, in a store of OpenCode 1.2 or later. That is what
// OpenCode 1.18.33 leaves when it is killed while the provider streams
// the compaction (or while it is still being written: callers look at it
// only once the session is idle), and its next prompt runs the compaction
// again before the user's message, as for a failed one: the session gets
// out by itself (TestKilledCompaction). nil when there is none.
func StoppedCompaction(s *store.Session) *store.Message {
	if sent.VersionOf(s) != sent.V118 {
		return nil
	}
	req, newest := PendingCompaction(s)
	if req == nil || newest == nil || !newest.Get("summary").Bool() || ErrorName(newest) != "" || IsCompleted(newest) {
		return nil
	}
	return newest
}

// CompactionRetryable reports whether the stored error of a failed
// compaction's summary says the provider may accept the request on a
// retry (`error.data.isRetryable`, absent: unknown, taken as retryable).
func CompactionRetryable(summary *store.Message) bool {
	v := summary.Get("error.data.isRetryable")
	return !v.Exists() || v.Bool()
}

func hasCompactionPart(m *store.Message) bool {
	for _, p := range m.Parts {
		if p.Type == "compaction" {
			return true
		}
	}
	return false
}
