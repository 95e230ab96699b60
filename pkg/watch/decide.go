package watch

import (
	"time"

	"github.com/sessfix/sessfix/pkg/scan"
)

// action is what the watcher does with a session whose time has come.
type action int

const (
	// repair: check it, plan and write its repair now.
	repair action = iota
	// wait: it changed within the settle window; look again at decision.at.
	wait
	// skip: its content was examined already; nothing to do until it
	// changes.
	skip
	// busy: an unfinished assistant message in a store another process
	// holds open; look again at decision.at.
	busy
)

func (a action) String() string {
	return [...]string{"repair", "wait", "skip", "busy"}[a]
}

// sessionState is what the watcher knows about a loaded session when its
// time has come.
type sessionState struct {
	// lastChange is when it last changed (scan.SettlePolicy.LastChange);
	// zero when unknown.
	lastChange time.Time
	// seen: its content is what the watcher last examined or wrote.
	seen bool
	// unfinished: an assistant message has neither time.completed nor an
	// error (Unfinished).
	unfinished bool
	// inUse reports whether another process holds the store open. It is
	// asked only when the answer matters: it looks through every process.
	inUse func() bool
}

// decision is what to do with a session, and when to look again.
type decision struct {
	action action
	at     time.Time
}

// decide is the watcher's policy for one session, a pure function of the
// session's state and the time: wait until it has been quiet for the
// settle window, skip content already examined, leave an unfinished
// message alone while it is in progress (looking again after recheck, to
// notice the other process is gone), else repair.
func decide(p scan.SettlePolicy, s sessionState, now time.Time, recheck time.Duration) decision {
	last := s.lastChange
	if !last.IsZero() && now.Sub(last) < p.Window() {
		return decision{action: wait, at: last.Add(p.Window())}
	}
	if s.seen {
		return decision{action: skip}
	}
	if p.InProgress(s.unfinished, last, now, s.inUse) {
		// Look again when the abandon window has passed, or earlier to see
		// whether the other process is gone (a killed OpenCode writes
		// nothing more, so no event would come).
		at := last.Add(p.AbandonWindow())
		if last.IsZero() {
			at = now.Add(p.AbandonWindow())
		}
		if re := now.Add(recheck); re.Before(at) {
			at = re
		}
		return decision{action: busy, at: at}
	}
	return decision{action: repair}
}
