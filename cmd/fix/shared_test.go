package fix

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
	"github.com/sessfix/sessfix/pkg/watch"
)

// instantClock is a watch.Clock stopped at the fix tests' clock whose
// timers fire only when they are due at once: the watcher examines every
// session of its initial scan, then waits for nothing.
type instantClock struct{}

func (instantClock) Now() time.Time { return clock }

func (instantClock) NewTimer(d time.Duration) watch.Timer {
	t := &instantTimer{ch: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

type instantTimer struct{ ch chan time.Time }

func (t *instantTimer) C() <-chan time.Time { return t.ch }

func (t *instantTimer) Stop() bool {
	select {
	case <-t.ch:
		return true
	default:
		return false
	}
}

func (t *instantTimer) Reset(d time.Duration) {
	if d <= 0 {
		select {
		case t.ch <- clock:
		default:
		}
	}
}

// TestFixAndWatchShareOnePipeline runs `sessfix fix --yes` on one copy of
// a store and the watcher on another: both go through the same repair
// pipeline, so with the same clock they write the same bytes, in every
// shape they write.
func TestFixAndWatchShareOnePipeline(t *testing.T) {
	cases := []string{"preflight-reasoning-after-tool", "preflight-blank-text", "preflight-thinking-only", "sf105-abandoned-tool", "tool-loop-negative"}
	for _, shape := range []store.Shape{store.ShapeSessions, store.ShapeStorage, store.ShapeSQLite} {
		t.Run(string(shape), func(t *testing.T) {
			fixPath, watchPath := materialize(t, shape, cases...), materialize(t, shape, cases...)
			before := storetest.Hash(t, fixPath, shape)

			e := newEnv(fixPath)
			e.opts.Yes = true
			journal := t.TempDir()
			e.opts.Apply = func(ctx context.Context, info store.Info, sets []*store.ChangeSet) (string, error) {
				return backup.Apply(ctx, backup.Options{Dir: journal, Now: instantClock{}.Now}, info, sets)
			}
			if err := e.run(t); err != nil && !errors.Is(err, cli.ErrFindings) {
				t.Fatalf("fix: %v\n%s", err, e.errOut)
			}

			repaired := watchOnce(t, watchPath, len(cases))
			if repaired == 0 {
				t.Fatal("the watcher repaired nothing")
			}
			fixed := storetest.Hash(t, fixPath, shape)
			if fixed == before {
				t.Fatal("fix changed nothing")
			}
			if storetest.Hash(t, watchPath, shape) != fixed {
				t.Errorf("fix and watch wrote different repairs of the same store")
			}
		})
	}
}

// watchOnce runs the watcher on a store until every session was examined
// once and returns how many it repaired.
func watchOnce(t *testing.T, path string, sessions int) int {
	t.Helper()
	var mu sync.Mutex
	examined, repaired := 0, 0
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := watch.New(watch.Options{
		Stores:   []store.Store{storetest.OpenOne(t, path)},
		Poll:     time.Hour,
		Clock:    instantClock{},
		Activity: func(store.Info) store.Activity { return store.Activity{State: store.ActivityNone} },
		Write:    fix.WriteOptions{Backup: backup.Options{Dir: t.TempDir()}},
		Report: func(e watch.Event) {
			mu.Lock()
			defer mu.Unlock()
			switch e.Kind {
			case watch.Repaired:
				repaired++
			case watch.Checked, watch.Unfixed:
			case watch.Failed:
				t.Errorf("watch: %s: %s: %s", e.Session, e.Message, e.Error)
			default:
				return
			}
			if examined++; examined == sessions {
				close(done)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- w.Run(ctx) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the watcher did not examine every session")
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return repaired
}
