package surgery

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// TestForkEveryShape writes a fork through the repair pipeline's write
// step in every shape, reads it back (VerifyFork), checks the original is
// untouched, then undoes the run and checks the store is back byte for
// byte (storetest.State), the new export file gone.
func TestForkEveryShape(t *testing.T) {
	for _, shape := range storetest.Shapes {
		t.Run(string(shape), func(t *testing.T) {
			st, s := open(t, shape, conversation(""))
			before := storetest.State(t, st.Info().Path, shape)
			p, err := PlanFork(s, ForkOptions{To: asst2, Now: forkNow})
			if err != nil {
				t.Fatal(err)
			}
			opts := backup.Options{Dir: t.TempDir()}
			pipe := &fix.Pipeline{Write: fix.WriteOptions{Apply: func(ctx context.Context, _ store.Info, sets []*store.ChangeSet) (string, error) {
				return backup.Apply(ctx, opts, sets[0].Store, sets)
			}}}
			run, err := pipe.Apply(context.Background(), st, []fix.Outcome{{Target: fix.Target{Store: st, Ref: store.SessionRef{ID: sesID}}, Status: fix.Planned, Plan: p.SessionPlan}})
			if err != nil {
				t.Fatal(err)
			}
			into := st
			if shape == store.ShapeExport {
				disc, err := shapes.Open([]string{p.Changes.Store.Path})
				if err != nil {
					t.Fatal(err)
				}
				defer disc.Close()
				into = disc.Stores[0]
			} else if got := storetest.State(t, st.Info().Path, shape); got == before {
				t.Fatal("the fork wrote nothing")
			}
			if err := VerifyFork(context.Background(), into, p); err != nil {
				t.Fatal(err)
			}
			if shape == store.ShapeExport && storetest.State(t, st.Info().Path, shape) != before {
				t.Error("the fork of an export file changed it")
			}
			orig := storetest.Load(t, st, sesID)
			if got, want := storetest.MessageIDs(orig), storetest.MessageIDs(s); !slices.Equal(got, want) {
				t.Errorf("the original holds %v after the fork, want %v", got, want)
			}
			if _, err := backup.Undo(context.Background(), opts, run, false); err != nil {
				t.Fatal(err)
			}
			if got := storetest.State(t, st.Info().Path, shape); got != before {
				t.Errorf("undo left the store different:\n%s\nwant\n%s", got, before)
			}
			if shape == store.ShapeExport {
				if _, err := os.Stat(p.Changes.Store.Path); !os.IsNotExist(err) {
					t.Errorf("undo left the fork's export file: %v", err)
				}
			}
		})
	}
}

// A sessions layout without session.json has no session record to copy:
// the fork is its messages and parts, under the new id, and undo removes
// every directory the run made.
func TestForkSessionsLayoutWithoutRecord(t *testing.T) {
	f := conversation("")
	f.Info, f.Title = nil, ""
	st, s := open(t, store.ShapeSessions, f)
	if s.Info != nil {
		t.Fatal("the fixture has a session record")
	}
	before := storetest.State(t, st.Info().Path, store.ShapeSessions)
	p, err := PlanFork(s, ForkOptions{Now: forkNow})
	if err != nil {
		t.Fatal(err)
	}
	if p.Changes.Edits[0].Kind != store.KindMessage {
		t.Fatalf("the first edit adds a %s", p.Changes.Edits[0].Kind)
	}
	opts := backup.Options{Dir: t.TempDir()}
	pipe := &fix.Pipeline{Write: fix.WriteOptions{Backup: opts}}
	run, err := pipe.Apply(context.Background(), st, []fix.Outcome{{Target: fix.Target{Store: st, Ref: store.SessionRef{ID: sesID}}, Status: fix.Planned, Plan: p.SessionPlan}})
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyFork(context.Background(), st, p); err != nil {
		t.Fatal(err)
	}
	if _, err := backup.Undo(context.Background(), opts, run, false); err != nil {
		t.Fatal(err)
	}
	if got := storetest.State(t, st.Info().Path, store.ShapeSessions); got != before {
		t.Errorf("undo left the store different:\n%s\nwant\n%s", got, before)
	}
}
