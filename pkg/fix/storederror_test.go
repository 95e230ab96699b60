package fix

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// demoSession loads a session of the store the README's first command scans.
func demoSession(t *testing.T, id string) *store.Session {
	t.Helper()
	s, err := storetest.OpenOne(t, "../../testdata/demo").Load(context.Background(), store.SessionRef{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// After the repair of a stored failed attempt, scan must stop failing on it:
// SF302 turns into an info finding that says why, and plans nothing.
func TestStoredErrorIsInfoOnceRepaired(t *testing.T) {
	s := demoSession(t, "ses_116b2f8bffffsSjTYTHkQXRjCt")
	opts := planOpts()
	before := scan.CheckSession(s, scanOpts())
	f := fs0(before, "SF302")
	if f.Code == "" || f.Severity != scan.Error || f.Fix == "" {
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
	g := fs0(after, "SF302")
	if g.Code == "" {
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

// A strategy given under a record rule's code applies to the preflight
// finding that stands for the same defect (FixedBy).
func TestStrategyFollowsFixedBy(t *testing.T) {
	s := demoSession(t, "ses_28d19877fffffNMbc1a0x3ej60")
	fs := scan.CheckSession(s, scanOpts())
	var deduped bool
	for _, f := range fs {
		if f.Code == "SF153" && strings.Contains(f.FixedBy, "SF103") {
			deduped = true
		}
	}
	if !deduped {
		t.Fatalf("demo session should report SF153 fixed by SF103: %+v", fs)
	}
	mutations := func(strategies map[string]string) map[string]bool {
		opts := planOpts()
		opts.Strategies = strategies
		p, err := Plan(s, fs, opts)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, e := range p.Changes.Edits {
			out[e.Mutation] = true
		}
		return out
	}
	if m := mutations(nil); !m["moveThinkingFirst"] || m["stripThinkingParts"] {
		t.Errorf("default plan should move the signed thinking first: %v", m)
	}
	if m := mutations(map[string]string{"SF103": "strip"}); !m["stripThinkingParts"] || m["moveThinkingFirst"] {
		t.Errorf("--strategy SF103=strip should strip on the SF153 finding: %v", m)
	}
}

// A stored error that names no message ("messages: text content blocks must
// contain non-whitespace text") is cleared by the repairs of the findings
// that explain it: fix plans no unfixed leftovers, and once the repair is on
// disk scan reports the error as history (info), in every shape.
func TestUnindexedStoredErrorClearedByRepairs(t *testing.T) {
	fx, err := storetest.LoadExportFixture(filepath.Join(fixtureRoot, "sf302-unindexed", "session.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, shape := range storetest.Shapes {
		t.Run(string(shape), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.OpenOne(t, storetest.Materialize(t, shape, t.TempDir(), fx))
			s, err := st.Load(ctx, store.SessionRef{ID: fx.ID})
			if err != nil {
				t.Fatal(err)
			}
			opts := planOpts()
			p, err := Plan(s, scan.CheckSession(s, scanOpts()), opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range p.Unfixed {
				if u.Finding.Severity >= scan.Warning {
					t.Errorf("left unfixed: %s %s: %s", u.Finding.Code, u.Finding.Message, u.Reason)
				}
			}
			w, err := shapes.OpenWriter(st.Info(), store.WriteOptions{Now: time.Now})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if err := w.Apply(ctx, p.Changes); err != nil {
				t.Fatal(err)
			}
			after, err := reopen(t, st).Load(ctx, store.SessionRef{ID: fx.ID})
			if err != nil {
				t.Fatal(err)
			}
			found := scan.CheckSession(after, scanOpts())
			for _, f := range found {
				if f.Code != "SF302" && f.Severity >= scan.Warning {
					t.Errorf("after the fix: %s %s", f.Code, f.Message)
				}
			}
			if f := fs0(found, "SF302"); f.Code == "" || f.Severity != scan.Info || !strings.Contains(f.Message, "no such problem") {
				t.Errorf("after the fix SF302 = %+v; want info saying the session no longer shows the problem", f)
			}
		})
	}
}
