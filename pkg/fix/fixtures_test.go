package fix

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

const fixtureRoot = "../../testdata/sessions"

// fixtureStores opens every rule fixture (testdata/sessions) in every shape
// it names, or its committed store tree, each in its own subtest.
func fixtureStores(t *testing.T, each func(t *testing.T, st store.Store, idle time.Duration)) {
	for _, c := range storetest.Cases(t, fixtureRoot) {
		for _, shape := range c.Shapes {
			t.Run(path.Join(c.Name, string(shape)), func(t *testing.T) {
				each(t, c.Open(t, shape, t.TempDir()), c.Idle)
			})
		}
	}
}

// loadReadable loads the sessions of a fixture store that load; a session that
// cannot be loaded is SF201's business, with nothing to plan.
func loadReadable(t *testing.T, st store.Store) []*store.Session {
	t.Helper()
	ctx := context.Background()
	refs, err := st.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []*store.Session
	for _, ref := range refs {
		s, err := st.Load(ctx, ref)
		if err != nil {
			continue // reported by SF201; nothing to plan
		}
		out = append(out, s)
	}
	return out
}

func clockFor(s *store.Session, idle time.Duration) Options {
	now := s.LastModified().Add(idle)
	clock := func() time.Time { return now }
	return Options{Now: clock, Scan: &scan.Options{Now: clock}}
}

// isStoredError reports findings that describe a past event and stay after
// the repair (the failed attempt is left alone on purpose).
func isStoredError(f scan.Finding) bool { return f.Code == "SF302" }

// TestFixtures plans every rule fixture in every shape and checks the plan in
// memory: fixed findings gone, nothing new, a second plan empty.
func TestFixtures(t *testing.T) {
	fixtureStores(t, func(t *testing.T, st store.Store, idle time.Duration) {
		for _, s := range loadReadable(t, st) {
			opts := clockFor(s, idle)
			before := opts.check(s)
			p, err := Plan(s, before, opts)
			if err != nil {
				t.Fatalf("plan: %v", err)
			}
			// A caller that already checked the session gets the same plan.
			if q, err := PlanChecked(s, before, before, opts); err != nil || !reflect.DeepEqual(q, p) {
				t.Errorf("PlanChecked differs from Plan (err %v):\n%+v\n%+v", err, q, p)
			}
			fixable := 0
			for _, f := range before {
				// A session without its record (no message or part named)
				// is reported only, on purpose.
				named := f.MessageID != "" || f.PartID != ""
				if r := scan.Lookup(f.Code); r != nil && r.Fixable && f.Fix != "" && named {
					fixable++
				}
			}
			if fixable > 0 && p.Empty() && len(p.Notes) == 0 {
				t.Errorf("%d fixable findings %v, nothing planned; unfixed: %+v", fixable, codes(before), p.Unfixed)
			}
			fixed, err := ApplyInMemory(s, p.Changes)
			if err != nil {
				t.Fatal(err)
			}
			after := opts.check(fixed)
			for _, r := range p.Fixed {
				if !isStoredError(r.Finding) && present(r.Finding, after) {
					t.Errorf("%s %s still reported", r.Finding.Code, r.Finding.Message)
				}
			}
			if nf := newFindings(before, after); len(nf) > 0 {
				t.Errorf("new findings: %v", codes(nf))
			}
			again, err := Plan(fixed, after, opts)
			if err != nil || !again.Empty() {
				t.Errorf("second plan: %v %+v", err, again)
			}
		}
	})
}

// TestFixturesOnDisk applies every fixture's plan with the store's own
// writer, reloads the session from disk and checks the findings are gone and
// a second plan is empty.
func TestFixturesOnDisk(t *testing.T) {
	fixtureStores(t, func(t *testing.T, st store.Store, idle time.Duration) {
		ctx := context.Background()
		for _, s := range loadReadable(t, st) {
			opts := clockFor(s, idle)
			before := opts.check(s)
			p, err := Plan(s, before, opts)
			if err != nil {
				t.Fatal(err)
			}
			if p.Empty() {
				continue
			}
			w, err := shapes.OpenWriter(st.Info(), store.WriteOptions{Now: opts.Now})
			if err != nil {
				t.Fatal(err)
			}
			err = w.Apply(ctx, p.Changes)
			w.Close()
			if err != nil {
				t.Fatalf("apply: %v", err)
			}
			reread := reopen(t, st)
			defer reread.Close()
			var disk *store.Session
			for _, ref := range mustList(t, reread) {
				if ref.ID == s.ID {
					if disk, err = reread.Load(ctx, ref); err != nil {
						t.Fatal(err)
					}
				}
			}
			if disk == nil {
				t.Fatalf("session %s gone after the fix", s.ID)
			}
			after := opts.check(disk)
			for _, r := range p.Fixed {
				if !isStoredError(r.Finding) && present(r.Finding, after) {
					t.Errorf("%s still reported on disk: %s", r.Finding.Code, r.Finding.Message)
				}
			}
			if nf := newFindings(before, after); len(nf) > 0 {
				t.Errorf("new findings on disk: %v (%s)", codes(nf), nf[0].Message)
			}
			again, err := Plan(disk, after, opts)
			if err != nil || !again.Empty() {
				t.Errorf("second plan on disk: %v\n%s", err, editSummary(again))
			}
		}
	})
}

func reopen(t *testing.T, st store.Store) store.Store {
	t.Helper()
	return storetest.OpenOne(t, st.Info().Path)
}

func mustList(t *testing.T, st store.Store) []store.SessionRef {
	t.Helper()
	refs, err := st.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return refs
}

// TestRealHealthyStoresPlanNothing: sessions recorded with real OpenCode
// (testdata/real) are healthy; fix must not touch them.
func TestRealHealthyStoresPlanNothing(t *testing.T) {
	for _, path := range []string{
		"../../testdata/real/opencode-1.1.65/storage",
		"../../testdata/real/opencode-1.18.33/opencode.db",
	} {
		t.Run(filepath.Base(filepath.Dir(path)), func(t *testing.T) {
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("real store missing: %v", err)
			}
			sessions := storetest.LoadAll(t, storetest.OpenOne(t, path))
			if len(sessions) == 0 {
				t.Fatal("no sessions in the real store")
			}
			for _, s := range sessions {
				opts := clockFor(s, time.Hour)
				p, err := Plan(s, opts.check(s), opts)
				if err != nil || !p.Empty() {
					t.Errorf("session %s: %v\n%s", s.ID, err, editSummary(p))
				}
			}
		})
	}
}
