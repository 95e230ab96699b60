package opencode

import (
	"strings"

	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// FailedAttempt returns the stored assistant message whose provider error
// matches text (the newest one), or nil. Texts match when either contains
// the other once trimmed, so a pasted error with a prefix still matches.
func FailedAttempt(s *store.Session, text string) *store.Message {
	t := strings.TrimSpace(text)
	if t == "" {
		return nil
	}
	for i := len(s.Messages) - 1; i >= 0; i-- {
		m := s.Messages[i]
		if m.Role != "assistant" || ErrorName(m) == "" || sent.ExcludedBySessfix(m) {
			continue
		}
		stored := strings.TrimSpace(m.Get("error.data.message").String())
		if stored != "" && (strings.Contains(stored, t) || strings.Contains(t, stored)) {
			return m
		}
	}
	return nil
}

// LastFailedAttempt returns the session's failed attempt: its last
// assistant message, when that message carries a provider error that
// error-driven recovery classifies. Messages sessfix excluded are passed
// over (their error is sessfix's, not the provider's); any other assistant
// message ends the search. A compaction's summary message is not one: the
// request it failed on is the compaction's (the history as one text), so
// an index in its error says nothing about the history OpenCode sends, and
// the failure is FailedCompaction's. A context overflow OpenCode gave up on
// is the exception: the history's next request meets it again.
func LastFailedAttempt(s *store.Session) *store.Message {
	for i := len(s.Messages) - 1; i >= 0; i-- {
		m := s.Messages[i]
		if m.Role != "assistant" || sent.ExcludedBySessfix(m) {
			continue
		}
		if m.Get("summary").Bool() && ErrorName(m) != ContextOverflowName {
			return nil
		}
		if StoredErrorType(m) == ErrorNone {
			return nil
		}
		return m
	}
	return nil
}

// LastFailedWith is LastFailedAttempt when that attempt failed with an
// error of type t (StoredErrorType), else nil.
func LastFailedWith(s *store.Session, t ErrorType) *store.Message {
	if m := LastFailedAttempt(s); m != nil && StoredErrorType(m) == t {
		return m
	}
	return nil
}

// PreviousUser is the closest user message before message i of the
// session, or nil.
func PreviousUser(s *store.Session, i int) *store.Message {
	for j := i - 1; j >= 0; j-- {
		if s.Messages[j].Role == "user" {
			return s.Messages[j]
		}
	}
	return nil
}
