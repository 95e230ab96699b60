package watch

import (
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/scan"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	p := scan.SettlePolicy{Settle: 2 * time.Second, Abandon: time.Minute}
	const recheck = 5 * time.Second
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	for _, c := range []struct {
		name       string
		last       time.Time
		seen       bool
		unfinished bool
		inUse      bool
		want       action
		at         time.Time
		asksInUse  bool
	}{
		{name: "changed 1s ago", last: ago(time.Second), want: wait, at: ago(time.Second).Add(2 * time.Second)},
		{name: "changed just now, already seen", last: now, seen: true, want: wait, at: now.Add(2 * time.Second)},
		{name: "changed in the near future", last: now.Add(time.Second), want: wait, at: now.Add(3 * time.Second)},
		{name: "quiet for exactly the window", last: ago(2 * time.Second), want: repair},
		{name: "quiet, content seen before", last: ago(time.Hour), seen: true, want: skip},
		{name: "quiet, content seen, unfinished and in use", last: ago(10 * time.Second), seen: true, unfinished: true, inUse: true, want: skip},
		{name: "nothing known about when it changed", want: repair},
		{name: "unfinished, nobody holds the store", last: ago(10 * time.Second), unfinished: true, want: repair, asksInUse: true},
		{name: "unfinished and in use: recheck first", last: ago(10 * time.Second), unfinished: true, inUse: true, want: busy, at: now.Add(recheck), asksInUse: true},
		{name: "unfinished and in use: abandon window ends first", last: ago(58 * time.Second), unfinished: true, inUse: true, want: busy, at: now.Add(2 * time.Second), asksInUse: true},
		{name: "unfinished and in use, time unknown", unfinished: true, inUse: true, want: busy, at: now.Add(recheck), asksInUse: true},
		{name: "unfinished, in use, abandoned", last: ago(2 * time.Minute), unfinished: true, inUse: true, want: repair},
		{name: "finished, in use", last: ago(10 * time.Second), inUse: true, want: repair},
	} {
		t.Run(c.name, func(t *testing.T) {
			asked := false
			st := sessionState{lastChange: c.last, seen: c.seen, unfinished: c.unfinished,
				inUse: func() bool { asked = true; return c.inUse }}
			d := decide(p, st, now, recheck)
			if d.action != c.want || !d.at.Equal(c.at) {
				t.Errorf("decide = %v at %v, want %v at %v", d.action, d.at, c.want, c.at)
			}
			if asked != c.asksInUse {
				t.Errorf("asked whether the store is in use: %v, want %v", asked, c.asksInUse)
			}
		})
	}
}
