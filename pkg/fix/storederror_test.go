package fix

import (
	"context"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

// After the repair of a stored failed attempt, scan must stop failing on it:
// SF302 turns into an info finding that says why, and plans nothing.
func TestStoredErrorIsInfoOnceRepaired(t *testing.T) {
	d, err := store.Open([]string{"../../testdata/demo"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	st := d.Stores[0]
	s, err := st.Load(context.Background(), store.SessionRef{ID: "ses_116b2f8bffffsSjTYTHkQXRjCt"})
	if err != nil {
		t.Fatal(err)
	}
	sf302 := func(fs []scan.Finding) *scan.Finding {
		for i := range fs {
			if fs[i].Code == "SF302" {
				return &fs[i]
			}
		}
		return nil
	}
	opts := planOpts()
	before := scan.CheckSession(s, scanOpts())
	f := sf302(before)
	if f == nil || f.Severity != scan.Error || f.Fix == "" {
		t.Fatalf("before the repair SF302 should be a fixable error: %+v", f)
	}
	p, err := Plan(s, before, opts)
	if err != nil || p.Empty() {
		t.Fatalf("plan: %v, empty %v", err, p.Empty())
	}
	fixed, err := ApplyInMemory(s, p.Changes)
	if err != nil {
		t.Fatal(err)
	}
	after := scan.CheckSession(fixed, scanOpts())
	g := sf302(after)
	if g == nil {
		t.Fatal("SF302 disappeared; it should stay as history (info)")
	}
	if g.Severity != scan.Info || g.Fix != "" || !strings.Contains(g.Message, "excluded") {
		t.Errorf("after the repair SF302 = %s %q fix %q; want info naming the exclusion", g.Severity, g.Message, g.Fix)
	}
	for _, h := range after {
		if h.Severity >= scan.Warning {
			t.Errorf("finding left after the repair: %s %s", h.Code, h.Message)
		}
	}
}
