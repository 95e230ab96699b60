package surgery

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// recordTotals reads a session record's cost and input and output tokens:
// a SQLite row's columns, another shape's keys.
func recordTotals(s *store.Session) (cost float64, in, out int64) {
	raw := s.Info.Raw
	if columns(s) {
		return gjson.GetBytes(raw, "cost").Float(), gjson.GetBytes(raw, "tokens_input").Int(), gjson.GetBytes(raw, "tokens_output").Int()
	}
	return gjson.GetBytes(raw, "cost").Float(), gjson.GetBytes(raw, "tokens.input").Int(), gjson.GetBytes(raw, "tokens.output").Int()
}

// TestCutsTakeTheRemovedTurnsOffTheSessionTotals: the session record of
// every shape holds the cost and token totals of its assistant messages
// (OpenCode adds each as a turn ends); a rewind or drop takes the removed
// messages' off, as fork counts only the copied ones, and undo puts them
// back (cutAndUndo).
func TestCutsTakeTheRemovedTurnsOffTheSessionTotals(t *testing.T) {
	cuts := map[string]func(*store.Session) (*fix.SessionPlan, error){
		"rewind": func(s *store.Session) (*fix.SessionPlan, error) { return PlanRewind(s, asst2, CutOptions{}) },
		"drop": func(s *store.Session) (*fix.SessionPlan, error) {
			return PlanDrop(s, []string{user2}, nil, CutOptions{})
		},
	}
	for name, cut := range cuts {
		for _, shape := range storetest.Shapes {
			t.Run(name+"/"+string(shape), func(t *testing.T) {
				st, s := open(t, shape, conversation(""))
				if shape == store.ShapeSQLite {
					s = withTotalsColumns(t, st, 0.03, 300, 30)
				}
				if cost, in, out := recordTotals(s); cost != 0.03 || in != 300 || out != 30 {
					t.Fatalf("fixture record totals %v %d %d, want 0.03 300 30", cost, in, out)
				}
				after := cutAndUndoOf(t, shape, st, s, cut)
				if cost, in, out := recordTotals(after); cost < 0.0199 || cost > 0.0201 || in != 200 || out != 20 {
					t.Errorf("after the %s the record's totals are %v %d %d, want 0.02 200 20: %s", name, cost, in, out, after.Info.Raw)
				}
			})
		}
	}
}

// TestCutTotalsKeepWhatOpenCodeCounted: a record whose totals are not the
// sum of its messages' (OpenCode counted something sessfix cannot see)
// loses exactly what the removed messages spent, and never goes below
// zero; a cut of parts only leaves the record alone.
func TestCutTotalsKeepWhatOpenCodeCounted(t *testing.T) {
	f := conversation("")
	st, _ := open(t, store.ShapeSQLite, f)
	s := withTotalsColumns(t, st, 0.03, 1000, 5)
	p, err := PlanRewind(s, asst2, CutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	last := p.Changes.Edits[len(p.Changes.Edits)-1]
	if last.Kind != store.KindSession || last.Op != store.OpUpdate {
		t.Fatalf("the last edit is %s %s, want the session record's update", last.Op, last.Kind)
	}
	if in, out := gjson.GetBytes(last.After, "tokens_input").Int(), gjson.GetBytes(last.After, "tokens_output").Int(); in != 900 || out != 0 {
		t.Errorf("tokens %d and %d, want 1000-100 and max(0, 5-10)", in, out)
	}
	if !strings.Contains(strings.Join(p.Notes, "\n"), "its totals without the removed messages: cost 0.030000 → 0.020000") {
		t.Errorf("no note names the new totals: %q", p.Notes)
	}

	// The cost too: one that is not the sum loses the removed share, and
	// stops at zero.
	st2, _ := open(t, store.ShapeSQLite, f)
	p2, err := PlanRewind(withTotalsColumns(t, st2, 0.005, 1000, 5), asst2, CutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if last := p2.Changes.Edits[len(p2.Changes.Edits)-1]; last.Kind != store.KindSession || gjson.GetBytes(last.After, "cost").Float() != 0 {
		t.Errorf("a cost of 0.005 less the removed 0.01 is %s, want 0", gjson.GetBytes(last.After, "cost").Raw)
	}

	p, err = PlanDrop(s, nil, []string{partID(asst3, 2)}, CutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range p.Changes.Edits {
		if e.Kind == store.KindSession {
			t.Errorf("a cut of parts changes the session record: %s", e.After)
		}
	}
}
