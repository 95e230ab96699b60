package opencode

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
)

// settleSession is a user message and an assistant message written at mod,
// whose body says OpenCode created it at activity; the assistant message
// is finished when end says how.
func settleSession(mod, activity time.Time, end string) *store.Session {
	u := testMessage("u", "user", `{"role":"user"}`)
	body := fmt.Sprintf(`{"role":"assistant","time":{"created":%d%s}}`, activity.UnixMilli(), end)
	if end == "error" {
		body = fmt.Sprintf(`{"role":"assistant","time":{"created":%d},"error":{"name":"APIError"}}`, activity.UnixMilli())
	}
	m := testMessage("m", "assistant", body)
	u.Modified, m.Modified = mod, mod
	return &store.Session{Messages: []*store.Message{u, m}}
}

func TestSettlePolicyCheck(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	completed := fmt.Sprintf(`,"completed":%d`, now.UnixMilli())
	const (
		none, open, writing = store.ActivityNone, store.ActivityOpen, store.ActivityWriting
		unknown, never      = store.ActivityUnknown, store.ActivityNever
	)
	for _, c := range []struct {
		name     string
		mod, act time.Duration // before now
		end      string        // "", "error" or a completion
		activity store.ActivityState
		inUse    bool
		why      string // a substring of Use.Why
		asks     bool   // whether Activity is asked
		until    time.Duration
	}{
		{name: "failed turn written just now", end: "error", activity: open, why: "last turn is finished"},
		{name: "finished turn written just now", end: completed, activity: writing, why: "last turn is finished"},
		{name: "streaming, written 2s ago", mod: 2 * time.Second, act: 2 * time.Second, activity: none, inUse: true, why: "changed 2s ago", asks: true, until: 3 * time.Second},
		{name: "killed 10s ago, nobody has the store open", mod: 10 * time.Second, act: 10 * time.Second, activity: none, why: "OpenCode stopped", asks: true},
		{name: "long tool, OpenCode has the store open", mod: 5 * time.Minute, act: 5 * time.Minute, activity: open, inUse: true, why: "has the store open", asks: true, until: 5 * time.Minute},
		{name: "a write in progress", mod: time.Minute, act: time.Minute, activity: writing, inUse: true, why: "is writing the store", asks: true, until: 9 * time.Minute},
		{name: "cannot tell, within the abandon window", mod: time.Minute, act: time.Minute, activity: unknown, inUse: true, why: "cannot be seen", asks: true, until: 9 * time.Minute},
		{name: "store open, abandoned", mod: 11 * time.Minute, act: 11 * time.Minute, activity: open, why: "quiet for more than 10m0s", asks: true},
		{name: "an export, written just now", activity: never, why: "does not write", asks: true},
		{name: "a fresh copy of old records", mod: time.Second, act: 90 * 24 * time.Hour, activity: unknown, why: "quiet for more than", asks: true},
		{name: "written 3s in the future: clock skew", mod: -3 * time.Second, act: time.Hour, activity: none, inUse: true, why: "after the current time", asks: true, until: 8 * time.Second},
		{name: "written an hour in the future: ignored", mod: -time.Hour, act: 10 * time.Second, activity: none, why: "OpenCode stopped", asks: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			asked := false
			p := SettlePolicy{Activity: func(store.Info) store.Activity {
				asked = true
				return store.Activity{State: c.activity, PID: 42, Command: "opencode"}
			}}
			u := p.Check(settleSession(now.Add(-c.mod), now.Add(-c.act), c.end), now)
			if u.InUse != c.inUse || !strings.Contains(u.Why, c.why) {
				t.Errorf("Check = %v (%s), want %v (%s)", u.InUse, u.Why, c.inUse, c.why)
			}
			if asked != c.asks {
				t.Errorf("asked for the store's activity: %v, want %v", asked, c.asks)
			}
			if c.inUse && !u.Until.Equal(now.Add(c.until)) {
				t.Errorf("Until = %v, want now + %v", u.Until, c.until)
			}
			if u.Watching != (c.inUse && c.activity != none) {
				t.Errorf("Watching = %v", u.Watching)
			}
		})
	}
}

// TestSettlePolicyWindows: --settle 0 (NoSettle) drops the settle window,
// not replaces it by the default; the zero policy has the defaults.
func TestSettlePolicyWindows(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var zero SettlePolicy
	if zero.Window() != DefaultSettle || zero.AbandonWindow() != DefaultAbandon {
		t.Errorf("zero policy: windows %v, %v", zero.Window(), zero.AbandonWindow())
	}
	none := SettlePolicy{Settle: NoSettle, Activity: func(store.Info) store.Activity { return store.Activity{State: store.ActivityNone} }}
	if none.Window() != 0 {
		t.Errorf("NoSettle window %v", none.Window())
	}
	s := settleSession(now.Add(-time.Millisecond), now.Add(-time.Millisecond), "")
	if u := none.Check(s, now); u.InUse {
		t.Errorf("with no settle window, a message nobody has open is in use: %s", u.Why)
	}
	if u := (SettlePolicy{Settle: time.Second}).Check(s, now); !u.InUse {
		t.Errorf("within a 1s settle window, a message written 1ms ago is not in use: %s", u.Why)
	}
}

func TestSettlePolicyLastChange(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	p := SettlePolicy{Settle: 5 * time.Second}
	for _, c := range []struct {
		name      string
		mod, act  time.Duration // before now
		lastEvent time.Duration // before now; 0 means none
		want      time.Duration // before now; -1 means the zero time
	}{
		{name: "written 2s ago", mod: 2 * time.Second, act: 2 * time.Second, want: 2 * time.Second},
		{name: "a fresh copy of old records", mod: time.Second, act: 90 * 24 * time.Hour, want: 90 * 24 * time.Hour},
		{name: "written 3s in the future", mod: -3 * time.Second, act: time.Hour, want: -3 * time.Second},
		{name: "written an hour in the future", mod: -time.Hour, act: time.Hour, want: time.Hour},
		{name: "file and records an hour in the future", mod: -time.Hour, act: -time.Hour, want: -1},
		{name: "an event after the last write", mod: 10 * time.Second, act: 10 * time.Second, lastEvent: time.Second, want: time.Second},
		{name: "an event before the last write", mod: 2 * time.Second, act: 2 * time.Second, lastEvent: 9 * time.Second, want: 2 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ev time.Time
			if c.lastEvent != 0 {
				ev = now.Add(-c.lastEvent)
			}
			want := now.Add(-c.want)
			if c.want == -1 {
				want = time.Time{}
			}
			if got := p.LastChange(settleSession(now.Add(-c.mod), now.Add(-c.act), ""), ev, now); !got.Equal(want) {
				t.Errorf("LastChange = %v, want %v", got, want)
			}
		})
	}
	if got := p.LastChange(&store.Session{}, time.Time{}, now); !got.IsZero() {
		t.Errorf("a session without times changed at %v", got)
	}
}

func TestOpenMessage(t *testing.T) {
	open := testMessage("a1", "assistant", `{"role":"assistant","time":{"created":1}}`)
	done := testMessage("a2", "assistant", `{"role":"assistant","time":{"created":1,"completed":2}}`)
	failed := testMessage("a3", "assistant", `{"role":"assistant","time":{"created":1},"error":{"name":"APIError"}}`)
	user := testMessage("u", "user", `{"role":"user"}`)
	for _, c := range []struct {
		name string
		msgs []*store.Message
		want *store.Message
	}{
		{"the newest assistant message is open", []*store.Message{user, open}, open},
		{"followed by a user message", []*store.Message{open, user}, open},
		{"an older open message", []*store.Message{open, user, done}, nil},
		{"a failed attempt after a killed turn", []*store.Message{open, user, failed}, nil},
		{"no assistant message", []*store.Message{user}, nil},
	} {
		if got := OpenMessage(&store.Session{Messages: c.msgs}); got != c.want {
			t.Errorf("%s: OpenMessage = %v, want %v", c.name, got, c.want)
		}
	}
}

// activityStore is a store whose activity probe counts its calls.
type activityStore struct {
	store.Store
	path  string
	calls *int
}

func (a activityStore) Info() store.Info { return store.Info{Path: a.path} }
func (a activityStore) Activity() store.Activity {
	*a.calls++
	return store.Activity{State: store.ActivityOpen}
}

func TestStoreActivityAsksEachStoreOnce(t *testing.T) {
	var calls int
	f := StoreActivity([]store.Store{activityStore{path: "/a", calls: &calls}})
	for range 3 {
		if got := f(store.Info{Path: "/a"}); got.State != store.ActivityOpen {
			t.Errorf("activity %v", got)
		}
	}
	if calls != 1 {
		t.Errorf("the store was asked %d times, want once", calls)
	}
	if got := f(store.Info{Path: "/other"}); got.State != store.ActivityUnknown {
		t.Errorf("a store not given: %v", got)
	}
}
