package scan

import (
	"fmt"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
)

// settleSession is one assistant message written at mod, whose body says
// OpenCode last wrote it at activity.
func settleSession(mod, activity time.Time) *store.Session {
	m := testMessage("m", "assistant", fmt.Sprintf(`{"role":"assistant","time":{"created":%d}}`, activity.UnixMilli()))
	m.Modified = mod
	return &store.Session{Messages: []*store.Message{m}}
}

func TestSettlePolicy(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	p := SettlePolicy{Settle: 5 * time.Second, Abandon: time.Minute}
	for _, c := range []struct {
		name      string
		mod, act  time.Duration // before now
		settled   bool
		busy      bool
		busyAge   time.Duration
		lastEvent time.Duration // before now; 0 means none
		last      time.Duration // LastChange, before now; -1 means zero time
	}{
		{name: "written 2s ago", mod: 2 * time.Second, act: 2 * time.Second, busy: true, busyAge: 2 * time.Second, last: 2 * time.Second},
		{name: "quiet for 10s", mod: 10 * time.Second, act: 10 * time.Second, settled: true, busyAge: 10 * time.Second, last: 10 * time.Second},
		{name: "a fresh copy of old records", mod: time.Second, act: 90 * 24 * time.Hour, settled: true, busy: true, busyAge: time.Second, last: time.Second},
		{name: "written 3s in the future", mod: -3 * time.Second, act: time.Hour, busy: true, busyAge: -3 * time.Second, last: -3 * time.Second},
		{name: "written an hour in the future", mod: -time.Hour, act: time.Hour, busy: true, busyAge: -time.Hour, last: -1},
		{name: "an event after the last write", mod: 10 * time.Second, act: 10 * time.Second, settled: true, busyAge: 10 * time.Second, lastEvent: time.Second, last: time.Second},
		{name: "an event before the last write", mod: 2 * time.Second, act: 2 * time.Second, busy: true, busyAge: 2 * time.Second, lastEvent: 9 * time.Second, last: 2 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := settleSession(now.Add(-c.mod), now.Add(-c.act))
			if got := p.Settled(s, now); got != c.settled {
				t.Errorf("Settled = %v, want %v", got, c.settled)
			}
			if busy, age := p.Busy(s, now); busy != c.busy || age != c.busyAge {
				t.Errorf("Busy = %v, %v; want %v, %v", busy, age, c.busy, c.busyAge)
			}
			var ev time.Time
			if c.lastEvent != 0 {
				ev = now.Add(-c.lastEvent)
			}
			want := now.Add(-c.last)
			if c.last == -1 {
				want = time.Time{}
			}
			if got := p.LastChange(s, ev, now); !got.Equal(want) {
				t.Errorf("LastChange = %v, want %v", got, want)
			}
		})
	}
	empty := &store.Session{}
	if !p.Settled(empty, now) {
		t.Error("a session without modification times is not settled")
	}
	if busy, _ := p.Busy(empty, now); busy {
		t.Error("a session without modification times is busy")
	}
}

func TestSettlePolicyInProgress(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	p := SettlePolicy{Abandon: time.Minute}
	for _, c := range []struct {
		unfinished, inUse bool
		last              time.Time
		want              bool
	}{
		{true, true, now.Add(-30 * time.Second), true},
		{true, true, time.Time{}, true},
		{true, true, now.Add(-2 * time.Minute), false}, // abandoned
		{true, false, now.Add(-time.Second), false},    // nobody holds the store
		{false, true, now.Add(-time.Second), false},    // every turn finished
	} {
		asked := false
		inUse := func() bool { asked = true; return c.inUse }
		if got := p.InProgress(c.unfinished, c.last, now, inUse); got != c.want {
			t.Errorf("InProgress(unfinished %v, in use %v, last %v) = %v, want %v", c.unfinished, c.inUse, c.last, got, c.want)
		}
		if matters := c.unfinished && (c.last.IsZero() || now.Sub(c.last) < time.Minute); asked != matters {
			t.Errorf("InProgress(unfinished %v, last %v) asked whether the store is in use: %v, want %v", c.unfinished, c.last, asked, matters)
		}
	}
	var zero SettlePolicy
	if zero.Window() != DefaultSettle || zero.AbandonWindow() != DefaultAbandon {
		t.Errorf("zero policy: windows %v, %v", zero.Window(), zero.AbandonWindow())
	}
}
