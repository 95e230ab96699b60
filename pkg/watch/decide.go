package watch

import (
	"time"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
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
	// busy: the settle policy says OpenCode may be writing it (an
	// unfinished newest assistant message in a store another program
	// holds open); look again at decision.at.
	busy
)

func (a action) String() string {
	return [...]string{"repair", "wait", "skip", "busy"}[a]
}

// sessionState is what the watcher knows about a loaded session when its
// time has come.
type sessionState struct {
	// lastChange is when it last changed (opencode.SettlePolicy.LastChange,
	// with the last change event); zero when unknown.
	lastChange time.Time
	// seen: its content is what the watcher last examined or wrote.
	seen bool
	// open: its newest assistant message has neither time.completed nor
	// an error (opencode.OpenMessage).
	open bool
	// activity reports what is seen of other programs using the store. It
	// is asked only when the answer matters (it may look through every
	// process).
	activity func() store.Activity
}

// decision is what to do with a session, when to look again, and, for a
// session left alone, the settle policy's verdict.
type decision struct {
	action action
	at     time.Time
	use    opencode.Use
}

// decide is the watcher's policy for one session, a pure function of the
// session's state and the time: wait until it has been quiet for the
// settle window, skip content already examined, leave it alone while the
// settle policy says OpenCode may be writing it (opencode.SettlePolicy.Judge;
// looking again when the policy's evidence runs out, or after recheck when
// it rests on another program having the store open, to notice that
// program is gone), else repair.
func decide(p opencode.SettlePolicy, s sessionState, now time.Time, recheck time.Duration) decision {
	last := s.lastChange
	if !last.IsZero() && now.Sub(last) < p.Window() {
		return decision{action: wait, at: last.Add(p.Window())}
	}
	if s.seen {
		return decision{action: skip}
	}
	u := p.Judge(s.open, last, s.activity, now)
	if !u.InUse {
		return decision{action: repair}
	}
	at := u.Until
	if re := now.Add(recheck); u.Watching && (at.IsZero() || re.Before(at)) {
		at = re
	}
	return decision{action: busy, at: at, use: u}
}
