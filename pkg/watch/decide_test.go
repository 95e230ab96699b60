package watch

import (
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	p := opencode.SettlePolicy{Settle: 2 * time.Second, Abandon: time.Minute}
	const recheck = 5 * time.Second
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	const none, held, unknown, never = store.ActivityNone, store.ActivityOpen, store.ActivityUnknown, store.ActivityNever
	for _, c := range []struct {
		name     string
		last     time.Time
		seen     bool
		open     bool
		activity store.ActivityState
		want     action
		at       time.Time
		asks     bool
	}{
		{name: "changed 1s ago", last: ago(time.Second), want: wait, at: ago(time.Second).Add(2 * time.Second)},
		{name: "changed just now, already seen", last: now, seen: true, want: wait, at: now.Add(2 * time.Second)},
		{name: "changed in the near future", last: now.Add(time.Second), want: wait, at: now.Add(3 * time.Second)},
		{name: "quiet for exactly the window", last: ago(2 * time.Second), want: repair},
		{name: "quiet, content seen before", last: ago(time.Hour), seen: true, want: skip},
		{name: "quiet, content seen, unfinished and in use", last: ago(10 * time.Second), seen: true, open: true, activity: held, want: skip},
		{name: "nothing known about when it changed", want: repair},
		{name: "unfinished, nobody holds the store", last: ago(10 * time.Second), open: true, activity: none, want: repair, asks: true},
		{name: "unfinished and in use: recheck first", last: ago(10 * time.Second), open: true, activity: held, want: busy, at: now.Add(recheck), asks: true},
		{name: "unfinished and in use: abandon window ends first", last: ago(58 * time.Second), open: true, activity: held, want: busy, at: now.Add(2 * time.Second), asks: true},
		{name: "unfinished and in use, time unknown", open: true, activity: held, want: busy, at: now.Add(recheck), asks: true},
		{name: "unfinished, cannot tell: recheck", last: ago(10 * time.Second), open: true, activity: unknown, want: busy, at: now.Add(recheck), asks: true},
		{name: "unfinished, in use, abandoned", last: ago(2 * time.Minute), open: true, activity: held, want: repair, asks: true},
		{name: "unfinished in an export", last: ago(10 * time.Second), open: true, activity: never, want: repair, asks: true},
		{name: "finished, in use", last: ago(10 * time.Second), activity: held, want: repair},
	} {
		t.Run(c.name, func(t *testing.T) {
			asked := false
			st := sessionState{lastChange: c.last, seen: c.seen, open: c.open,
				activity: func() store.Activity { asked = true; return store.Activity{State: c.activity} }}
			d := decide(p, st, now, recheck)
			if d.action != c.want || !d.at.Equal(c.at) {
				t.Errorf("decide = %v at %v, want %v at %v", d.action, d.at, c.want, c.at)
			}
			if asked != c.asks {
				t.Errorf("asked what the store's activity is: %v, want %v", asked, c.asks)
			}
			if (d.action == busy) != d.use.InUse || d.action == busy && d.use.Why == "" {
				t.Errorf("a %v decision with verdict %+v", d.action, d.use)
			}
		})
	}
}
