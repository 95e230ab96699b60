package opencode

import (
	"fmt"
	"sync"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
)

// DefaultSettle is the settle window: an unfinished assistant message that
// changed within it counts as being written, whatever else is seen, and
// watch waits this long after a session's last change before it looks.
const DefaultSettle = 5 * time.Second

// NoSettle, as a Settle, asks for no settle window at all (`--settle 0`):
// only what is seen of other programs (SettlePolicy.Activity) tells that a
// message is being written, and watch looks at a session at once.
const NoSettle time.Duration = -1

// DefaultAbandon is how long an unfinished assistant message counts as
// being written while another program has its store open (or this system
// cannot tell): OpenCode may be running a long tool, or streaming a long
// block it writes only when the block ends, and writing nothing meanwhile.
const DefaultAbandon = 10 * time.Minute

// NoAbandon, as an Abandon, asks for no abandon window (`--abandon 0`):
// another program having the store open is then no evidence at all, and
// only the settle window keeps an unfinished message from being repaired.
const NoAbandon time.Duration = -1

// SettlePolicy is sessfix's one rule for "may OpenCode still be writing
// this session?", which scan (an unfinished message is streaming, not
// stale), fix (a session in use is skipped) and watch (wait, or leave a
// session alone) all ask through Check or Judge. The rule, from the
// records and from what can be seen of other programs:
//
//   - Only the session's newest assistant message can be being written,
//     and only while it is open: neither time.completed nor an error. A
//     finished or failed turn is safe to repair at once, however recently
//     it was written, and so is an older unfinished message (OpenCode has
//     moved on from it).
//   - Nothing writes a store whose Activity is ActivityNever (an export
//     file), however fresh.
//   - An open newest message is being written while the session changed
//     within the settle window (LastChange); after that, while another
//     program has the store open or writes it (ActivityOpen,
//     ActivityWriting), or this system cannot tell (ActivityUnknown), and
//     the session changed within the abandon window. When no other program
//     has the store open (ActivityNone) the message was abandoned: OpenCode
//     was killed or stopped in the middle of the turn.
type SettlePolicy struct {
	// Settle is the settle window: zero means DefaultSettle, NoSettle (or
	// any negative value) none.
	Settle time.Duration
	// Abandon is the abandon window: zero means DefaultAbandon, NoAbandon
	// (any negative value) none.
	Abandon time.Duration
	// Activity reports what is seen of other programs using a store
	// (store.Store.Activity); nil means nothing can be seen (ActivityUnknown).
	// It is asked only when a session's newest assistant message is open.
	Activity func(store.Info) store.Activity
}

// Window returns the effective settle window (zero for NoSettle).
func (p SettlePolicy) Window() time.Duration {
	switch {
	case p.Settle == 0:
		return DefaultSettle
	case p.Settle < 0:
		return 0
	}
	return p.Settle
}

// AbandonWindow returns the effective abandon window (zero for NoAbandon).
func (p SettlePolicy) AbandonWindow() time.Duration {
	switch {
	case p.Abandon == 0:
		return DefaultAbandon
	case p.Abandon < 0:
		return 0
	}
	return p.Abandon
}

// Use is the settle policy's verdict on a session.
type Use struct {
	// InUse: OpenCode may be writing the session; leave it alone.
	InUse bool
	// Why says what the verdict rests on, for messages ("its last
	// assistant message is unfinished and changed 2s ago").
	Why string
	// Age is how long before now the session last changed (LastChange;
	// negative when that lies ahead of the clock, zero when unknown). Check
	// leaves it zero for a session whose last turn is finished.
	Age time.Duration
	// Until, for a session in use, is when the evidence of time runs out
	// (the settle or abandon window has passed); zero when it does not.
	Until time.Time
	// Watching is set when the verdict rests on another program having
	// the store open, or on not being able to tell: it may change as soon
	// as that program exits, so it is worth asking again before Until.
	Watching bool
}

// Check is the policy's verdict on a loaded session at now. For a session
// with an open turn, the time it last changed is that of the turn (the open
// message, its parts, and any record after it, by LastChange): a change to
// the session record (a title, a share) or to an earlier turn is not the
// turn being written.
func (p SettlePolicy) Check(s *store.Session, now time.Time) Use {
	open := OpenMessage(s)
	if open == nil {
		// A finished session's verdict rests on nothing else: its age is
		// not worth a pass over every record (LastActivity).
		return p.Judge(false, time.Time{}, nil, now)
	}
	last := p.LastChange(openTurn(s, open), time.Time{}, now)
	return p.Judge(true, last, func() store.Activity { return p.activity(s.Store) }, now)
}

// openTurn is the part of s an open turn consists of: the open message and
// every message after it, with the records that could not be read (one
// being written may be among them). It shares s's records.
func openTurn(s *store.Session, open *store.Message) *store.Session {
	i := len(s.Messages) - 1
	for i > 0 && s.Messages[i] != open {
		i--
	}
	return &store.Session{Store: s.Store, ID: s.ID, Messages: s.Messages[i:], Broken: s.Broken, Orphans: s.Orphans}
}

// Judge is the policy's verdict from what is known of a session: whether
// its newest assistant message is open, when it last changed (LastChange;
// zero when unknown), and what is seen of other programs using its store
// (asked only when the answer matters).
func (p SettlePolicy) Judge(open bool, last time.Time, activity func() store.Activity, now time.Time) Use {
	u := Use{}
	if !last.IsZero() {
		u.Age = now.Sub(last)
	}
	if !open {
		u.Why = "its last turn is finished"
		return u
	}
	const unfinished = "its last assistant message is unfinished"
	act := activity()
	switch {
	case act.State == store.ActivityNever:
		u.Why = act.String()
	case !last.IsZero() && u.Age < p.Window():
		u.InUse, u.Until = true, last.Add(p.Window())
		u.Why = fmt.Sprintf("%s and the session changed %s", unfinished, ago(u.Age))
	case act.State == store.ActivityNone:
		u.Why = unfinished + ", but " + act.String() + ": OpenCode stopped in the middle of the turn"
	case p.AbandonWindow() == 0:
		u.Why = unfinished + ", but it has been quiet for the settle window and no abandon window is set"
	case last.IsZero() && act.State == store.ActivityUnknown:
		u.Why = unfinished + " and nothing tells when it last changed"
	case last.IsZero() || u.Age < p.AbandonWindow():
		u.InUse, u.Watching = true, true
		if !last.IsZero() {
			u.Until = last.Add(p.AbandonWindow())
		}
		u.Why = fmt.Sprintf("%s and %s (it counts as in progress until it has been quiet for %s)", unfinished, act, p.AbandonWindow())
	default:
		u.Why = fmt.Sprintf("%s, but the session has been quiet for more than %s", unfinished, p.AbandonWindow())
	}
	return u
}

// ago says how long ago something happened.
func ago(age time.Duration) string {
	if age < 0 {
		return "after the current time"
	}
	return age.Round(time.Second).String() + " ago"
}

func (p SettlePolicy) activity(info store.Info) store.Activity {
	if p.Activity == nil {
		return store.Activity{State: store.ActivityUnknown}
	}
	return p.Activity(info)
}

// LastChange is when a session last changed: its newest record
// modification (file time, or SQLite's time_updated), or lastEvent (the
// last change event watch saw for it) when that is later. When the times
// OpenCode wrote inside the records (LastActivity) are older than
// StreamingMaxQuiet, or there are no modification times, those are taken
// instead: a copy, a restore or a git checkout renews file times, not the
// records. A time more than a settle window ahead of now (a restore, a
// clock change) says nothing and is ignored; one less far ahead is clock
// skew and counts. The zero time means nothing is known.
func (p SettlePolicy) LastChange(s *store.Session, lastEvent, now time.Time) time.Time {
	ahead := func(t time.Time) bool { return t.After(now.Add(p.Window())) }
	last, inside := s.LastModified(), LastActivity(s)
	if ahead(last) {
		last = time.Time{}
	}
	if ahead(inside) {
		inside = time.Time{}
	}
	if !inside.IsZero() && (last.IsZero() || now.Sub(inside) > StreamingMaxQuiet) {
		last = inside
	}
	if lastEvent.After(last) {
		last = lastEvent
	}
	return last
}

// OpenMessage returns the session's newest assistant message when it has
// neither time.completed nor an error, the only message OpenCode can still
// be writing; nil otherwise.
func OpenMessage(s *store.Session) *store.Message {
	for i := len(s.Messages) - 1; i >= 0; i-- {
		if m := s.Messages[i]; m.Role == "assistant" {
			if IsCompleted(m) || ErrorName(m) != "" {
				return nil
			}
			return m
		}
	}
	return nil
}

// StoreActivity returns a SettlePolicy.Activity that asks each of stores
// (store.Store.Activity) once, the first time it matters, and keeps the answer:
// for a run that lasts as long as a scan or a fix. Stores are matched by
// path; a store not among them is ActivityUnknown.
func StoreActivity(stores []store.Store) func(store.Info) store.Activity {
	type entry struct {
		once sync.Once
		st   store.Store
		a    store.Activity
	}
	byPath := map[string]*entry{}
	for _, st := range stores {
		byPath[st.Info().Path] = &entry{st: st}
	}
	return func(info store.Info) store.Activity {
		e := byPath[info.Path]
		if e == nil {
			return store.Activity{State: store.ActivityUnknown}
		}
		e.once.Do(func() { e.a = e.st.Activity() })
		return e.a
	}
}
