package surgery

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// cutAndUndo writes a cut's plan through the repair pipeline's write step,
// reloads the session, then undoes the run and checks the store is back
// byte for byte (storetest.State).
func cutAndUndo(t *testing.T, shape store.Shape, plan func(*store.Session) (*fix.SessionPlan, error)) *store.Session {
	t.Helper()
	st, s := open(t, shape, conversation(""))
	return cutAndUndoOf(t, shape, st, s, plan)
}

// cutAndUndoOf is cutAndUndo of session s of store st.
func cutAndUndoOf(t *testing.T, shape store.Shape, st store.Store, s *store.Session, plan func(*store.Session) (*fix.SessionPlan, error)) *store.Session {
	t.Helper()
	before := storetest.State(t, st.Info().Path, shape)
	p, err := plan(s)
	if err != nil {
		t.Fatal(err)
	}
	opts := backup.Options{Dir: t.TempDir()}
	pipe := &fix.Pipeline{Write: fix.WriteOptions{Backup: opts}}
	run, err := pipe.Apply(context.Background(), st, []fix.Outcome{{Target: fix.Target{Store: st, Ref: store.SessionRef{ID: sesID}}, Status: fix.Planned, Plan: p}})
	if err != nil {
		t.Fatal(err)
	}
	after := storetest.Load(t, st, sesID)
	if _, err := backup.Undo(context.Background(), opts, run, false); err != nil {
		t.Fatal(err)
	}
	if got := storetest.State(t, st.Info().Path, shape); got != before {
		t.Errorf("undo left the store different:\n%s\nwant\n%s", got, before)
	}
	return after
}

func TestRewindEveryShape(t *testing.T) {
	for _, shape := range storetest.Shapes {
		t.Run(string(shape), func(t *testing.T) {
			after := cutAndUndo(t, shape, func(s *store.Session) (*fix.SessionPlan, error) {
				return PlanRewind(s, asst2[:12], CutOptions{})
			})
			if got, want := storetest.MessageIDs(after), []string{user1, asst1, asst2}; !slices.Equal(got, want) {
				t.Errorf("messages after rewind %v, want %v", got, want)
			}
			if n := len(after.Messages[1].Parts); n != 4 {
				t.Errorf("a kept message has %d parts, want 4", n)
			}
		})
	}
}

func TestDropEveryShape(t *testing.T) {
	for _, shape := range storetest.Shapes {
		t.Run(string(shape), func(t *testing.T) {
			// The second turn's user message takes its reply along; a
			// part of the first answer goes alone.
			after := cutAndUndo(t, shape, func(s *store.Session) (*fix.SessionPlan, error) {
				return PlanDrop(s, []string{user2}, []string{partID(asst2, 1)}, CutOptions{})
			})
			if got, want := storetest.MessageIDs(after), []string{user1, asst1, asst2}; !slices.Equal(got, want) {
				t.Errorf("messages after drop %v, want %v", got, want)
			}
			var parts []string
			for _, p := range after.Messages[2].Parts {
				parts = append(parts, p.ID)
			}
			if want := []string{partID(asst2, 2), partID(asst2, 3), partID(asst2, 4)}; !slices.Equal(parts, want) {
				t.Errorf("parts of %s after drop %v, want %v", asst2, parts, want)
			}
		})
	}
}

func TestDropKeepReplies(t *testing.T) {
	for _, shape := range []store.Shape{store.ShapeSQLite, store.ShapeStorage} {
		t.Run(string(shape), func(t *testing.T) {
			after := cutAndUndo(t, shape, func(s *store.Session) (*fix.SessionPlan, error) {
				return PlanDrop(s, []string{user2}, nil, CutOptions{KeepReplies: true})
			})
			if got, want := storetest.MessageIDs(after), []string{user1, asst1, asst2, asst3}; !slices.Equal(got, want) {
				t.Fatalf("messages %v, want %v", got, want)
			}
			if p := after.Messages[3].Get("parentID").String(); p != user1 {
				t.Errorf("the kept reply's parentID is %q, want %s", p, user1)
			}
		})
	}
}

func TestCutRefusals(t *testing.T) {
	_, s := open(t, store.ShapeStorage, conversation(""))
	cases := []struct {
		name string
		plan func() (*fix.SessionPlan, error)
	}{
		{"every message", func() (*fix.SessionPlan, error) { return PlanDrop(s, []string{user1, user2}, nil, CutOptions{}) }},
		{"every part", func() (*fix.SessionPlan, error) {
			return PlanDrop(s, nil, []string{partID(user2, 1)}, CutOptions{})
		}},
		{"reply of the first user message kept", func() (*fix.SessionPlan, error) {
			return PlanDrop(s, []string{user1}, nil, CutOptions{KeepReplies: true})
		}},
		// The answer's reasoning without its text: a thinking-only answer
		// the provider rejects.
		{"a broken answer", func() (*fix.SessionPlan, error) {
			return PlanDrop(s, nil, []string{partID(asst3, 3)}, CutOptions{})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := c.plan()
			var refused *RefusedError
			if !errors.As(err, &refused) {
				t.Fatalf("planned %+v, err %v; want a refusal", p, err)
			}
		})
	}
}

func TestCutRefusesARevertItRemoves(t *testing.T) {
	st, _ := open(t, store.ShapeSQLite, conversation(""))
	s := withRevertColumn(t, st, `{"messageID":"`+asst3+`","snapshot":"abc"}`)
	var refused *RefusedError
	if _, err := PlanRewind(s, user2, CutOptions{}); !errors.As(err, &refused) {
		t.Errorf("rewind across a pending revert: %v, want a refusal", err)
	}
	if _, err := PlanRewind(s, asst3, CutOptions{}); err != nil {
		t.Errorf("rewind to the last message changes nothing and is fine: %v", err)
	}
}

func TestCutNamesMessages(t *testing.T) {
	_, s := open(t, store.ShapeStorage, conversation(""))
	if _, err := PlanRewind(s, "msg_nope", CutOptions{}); err == nil {
		t.Error("an unknown message was accepted")
	}
	if _, err := PlanRewind(s, "msg_1fed6", CutOptions{}); err == nil {
		t.Error("a prefix of several messages was accepted")
	}
	p, err := PlanRewind(s, asst3, CutOptions{})
	if err != nil || !p.Empty() {
		t.Errorf("rewind to the last message: %+v, %v; want an empty plan", p, err)
	}
}
