package backup_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// TestLockRollsBackAKilledChangeSet: a run killed after it applied a
// change set but before it recorded so (its entry still "recorded") is put
// back by the next backup.Lock of the store, in every shape, and recorded
// as failed, so the run's undo finds nothing left to restore and a second
// Lock nothing to do. When a record changed since the kill, Lock leaves
// everything as it is and says which record.
func TestLockRollsBackAKilledChangeSet(t *testing.T) {
	ctx := context.Background()
	for _, shape := range storetest.Shapes {
		for _, touched := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/changed-after=%v", shape, touched), func(t *testing.T) {
				r := newRig(t, shape)
				w, err := shapes.OpenWriter(r.info, store.WriteOptions{})
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
				j, err := backup.Begin(r.opts, r.info)
				if err != nil {
					t.Fatal(err)
				}
				cs := repair(t, r.s)
				if err := j.Record(ctx, w, cs); err != nil {
					t.Fatal(err)
				}
				if err := w.Apply(ctx, cs); err != nil {
					t.Fatal(err)
				}
				if touched {
					mutateAfterRun(t, r.info, r.path)
				}
				left := storeState(t, r.info)

				pending, err := backup.Interrupted(r.opts, r.info)
				if err != nil || len(pending) != 1 || pending[0].RunID != j.ID() || pending[0].Done() ||
					!strings.Contains(pending[0].Message(), "puts that session back") {
					t.Fatalf("Interrupted = %+v, %v; want the change set, not yet put back", pending, err)
				}
				if storeState(t, r.info) != left {
					t.Fatal("Interrupted changed the store")
				}

				lock, rbs, err := backup.Lock(ctx, r.opts, r.info)
				if err != nil {
					t.Fatal(err)
				}
				if err := lock.Release(); err != nil {
					t.Fatal(err)
				}
				if len(rbs) != 1 || rbs[0].RunID != j.ID() || rbs[0].Session != cs.SessionID {
					t.Fatalf("rollbacks = %+v, want the one change set of run %s", rbs, j.ID())
				}
				if touched {
					if rbs[0].Done() || !strings.Contains(rbs[0].Message(), "left as it is") {
						t.Fatalf("rollback = %+v (%s), want it refused", rbs[0], rbs[0].Message())
					}
					if storeState(t, r.info) != left {
						t.Fatal("a refused roll-back changed the store")
					}
					if runs, _ := backup.List(r.opts); runs[0].State != "incomplete" {
						t.Fatalf("the refused run is %q, want it still incomplete", runs[0].State)
					}
					return
				}
				if !rbs[0].Done() || rbs[0].Restored == 0 {
					t.Fatalf("rollback = %+v, want records restored", rbs[0])
				}
				r.assertAsBefore(t, "after the roll-back")
				if runs, _ := backup.List(r.opts); len(runs) != 1 || runs[0].State != backup.StateFailed {
					t.Fatalf("runs = %+v, want the run failed (rolled back)", runs)
				}
				lock, again, err := backup.Lock(ctx, r.opts, r.info)
				if err != nil || len(again) != 0 {
					t.Fatalf("second Lock: %+v, %v; want nothing to roll back", again, err)
				}
				lock.Release()
				res, err := backup.Undo(ctx, r.opts, j.ID(), false)
				if err != nil || len(res.Restored) != 0 {
					t.Fatalf("undo after the roll-back = %+v, %v; want nothing restored", res, err)
				}
				r.assertAsBefore(t, "after the undo")
			})
		}
	}
}

// TestLockAfterAKillBeforeTheFirstWrite: a change set recorded but never
// applied (killed before its first write, or a database transaction SQLite
// rolled back) leaves nothing to put back; Lock marks it and says that
// nothing had been written, not that it put back no records.
func TestLockAfterAKillBeforeTheFirstWrite(t *testing.T) {
	ctx := context.Background()
	for _, shape := range storetest.Shapes {
		t.Run(string(shape), func(t *testing.T) {
			r := newRig(t, shape)
			w, err := shapes.OpenWriter(r.info, store.WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			j, err := backup.Begin(r.opts, r.info)
			if err != nil {
				t.Fatal(err)
			}
			if err := j.Record(ctx, w, repair(t, r.s)); err != nil {
				t.Fatal(err)
			}
			lock, rbs, err := backup.Lock(ctx, r.opts, r.info)
			if err != nil {
				t.Fatal(err)
			}
			lock.Release()
			if len(rbs) != 1 || !rbs[0].Done() || rbs[0].Restored != 0 ||
				!strings.Contains(rbs[0].Message(), "nothing of it had been written") {
				t.Fatalf("rollbacks = %+v (%v), want one with nothing to put back, said so", rbs, rbs)
			}
			r.assertAsBefore(t, "after the lock")
		})
	}
}
