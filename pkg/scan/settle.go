package scan

import (
	"time"

	"github.com/sessfix/sessfix/pkg/store"
)

// DefaultSettle is how long a session must be quiet before sessfix treats an
// unfinished assistant message as abandoned rather than still streaming.
const DefaultSettle = 5 * time.Second

// DefaultAbandon is how long an unfinished assistant message, in a store
// another process holds open, counts as in progress (OpenCode may be running
// a long tool and writing nothing meanwhile).
const DefaultAbandon = 10 * time.Minute

// SettlePolicy is sessfix's one rule for "may OpenCode still be writing this
// session?". scan consults it to tell a message that is still streaming from
// an abandoned one (Settled), fix to leave alone a session that may be in use
// (Busy), and watch to decide when a changed session is quiet enough to
// examine (LastChange) and whether an unfinished message is still in
// progress (InProgress). When a session counts as in use is decided here and
// nowhere else.
type SettlePolicy struct {
	// Settle is the quiet period after a session's last write; zero or less
	// means DefaultSettle.
	Settle time.Duration
	// Abandon is how long an unfinished assistant message in a store another
	// process holds open counts as in progress; zero or less means
	// DefaultAbandon.
	Abandon time.Duration
}

// Window returns the effective settle window.
func (p SettlePolicy) Window() time.Duration {
	if p.Settle <= 0 {
		return DefaultSettle
	}
	return p.Settle
}

// AbandonWindow returns the effective abandon window.
func (p SettlePolicy) AbandonWindow() time.Duration {
	if p.Abandon <= 0 {
		return DefaultAbandon
	}
	return p.Abandon
}

// Settled reports whether the session has been quiet for longer than the
// settle window: its newest record modification (file mtime, or
// time_updated) is older than the window, or the records themselves show no
// activity for StreamingMaxQuiet (a copy, a restore or a git checkout renews
// file times but not the times OpenCode wrote).
func (p SettlePolicy) Settled(s *store.Session, now time.Time) bool {
	last := s.LastModified()
	if last.IsZero() || now.Sub(last) > p.Window() {
		return true
	}
	a := LastActivity(s)
	return !a.IsZero() && now.Sub(a) > StreamingMaxQuiet
}

// Busy reports whether a session fix would change may still be in use: a
// record of it changed within the settle window, or carries a modification
// time after now. age is how long ago that change was (negative when it lies
// in the future).
func (p SettlePolicy) Busy(s *store.Session, now time.Time) (busy bool, age time.Duration) {
	last := s.LastModified()
	if last.IsZero() {
		return false, 0
	}
	age = now.Sub(last)
	return age < p.Window(), age
}

// LastChange is when a session last changed, for waiting until it is quiet:
// the newest record modification, or lastEvent (the last change event seen
// for it) when that is later. A modification time more than a settle window
// in the future (a restore, a clock change) says nothing and is ignored. The
// zero time means nothing is known.
func (p SettlePolicy) LastChange(s *store.Session, lastEvent, now time.Time) time.Time {
	last := s.LastModified()
	if last.After(now.Add(p.Window())) {
		last = time.Time{}
	}
	if lastEvent.After(last) {
		last = lastEvent
	}
	return last
}

// InProgress reports whether an unfinished assistant message counts as still
// being written: the session changed within the abandon window (or when it
// changed is unknown: last is zero) and another process holds the store
// open. inUse is asked only when the answer matters (it may look through
// every process).
func (p SettlePolicy) InProgress(unfinished bool, last, now time.Time, inUse func() bool) bool {
	return unfinished && (last.IsZero() || now.Sub(last) < p.AbandonWindow()) && inUse()
}
