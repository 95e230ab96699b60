package cli

import (
	"errors"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
)

// TestSetSettle: zero means no window, never the default; negative values
// are usage errors.
func TestSetSettle(t *testing.T) {
	for _, c := range []struct {
		settle, abandon         time.Duration
		wantSettle, wantAbandon time.Duration
		usage                   bool
	}{
		{5 * time.Second, 10 * time.Minute, 5 * time.Second, 10 * time.Minute, false},
		{0, 10 * time.Minute, opencode.NoSettle, 10 * time.Minute, false},
		{time.Second, 0, time.Second, opencode.NoAbandon, false},
		{-time.Second, time.Minute, 0, 0, true},
		{time.Second, -time.Minute, 0, 0, true},
	} {
		var o scan.Options
		err := SetSettle(&o, c.settle, c.abandon)
		var fe *FlagError
		if got := errors.As(err, &fe); got != c.usage {
			t.Errorf("SetSettle(%v, %v): error %v, want usage error %v", c.settle, c.abandon, err, c.usage)
			continue
		}
		if !c.usage && (o.Settle != c.wantSettle || o.Abandon != c.wantAbandon) {
			t.Errorf("SetSettle(%v, %v) = %v, %v; want %v, %v", c.settle, c.abandon, o.Settle, o.Abandon, c.wantSettle, c.wantAbandon)
		}
	}
	if p := (&scan.Options{Settle: opencode.NoSettle, Abandon: opencode.NoAbandon}).Policy(); p.Window() != 0 || p.AbandonWindow() != 0 {
		t.Errorf("--settle 0 --abandon 0 give windows %v, %v; want none", p.Window(), p.AbandonWindow())
	}
}
