package scan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/golden"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// The rule fixture cases under testdata/sessions (storetest.Case) each hold
// expected.txt: one line per finding, "CODE severity message-id part-id
// message", "-" for an empty id.
const fixtureRoot = "../../testdata/sessions"

func TestFixtures(t *testing.T) {
	for _, c := range storetest.Cases(t, fixtureRoot) {
		t.Run(c.Name, func(t *testing.T) {
			goldenPath := filepath.Join(c.Dir, "expected.txt")
			wrote := false
			check := func(name string, got string) {
				t.Helper()
				if golden.Update() && !wrote {
					if err := os.WriteFile(goldenPath, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					wrote = true
					return
				}
				want, err := os.ReadFile(goldenPath)
				if err != nil {
					t.Fatalf("%v (run go test ./pkg/scan -run TestFixtures -update)", err)
				}
				if got != string(want) {
					t.Errorf("%s: findings differ from expected.txt\n--- got\n%s--- want\n%s", name, got, want)
				}
			}
			for _, shape := range c.Shapes {
				dir := t.TempDir()
				st := c.Open(t, shape, dir)
				check(string(st.Info().Shape), scanStore(t, st, dir, c.Idle))
			}
		})
	}
}

// scanStore checks every session of the store with the clock set idle after
// the session's last modification, and what is seen of other programs
// using it (store.Store.Activity: none, in a test's temp dir, and never for an
// export), and renders the findings as golden lines.
// File times under dir are first set to the newest time inside the records,
// as if OpenCode had just written them, so the result does not depend on
// when the files were checked out.
func scanStore(t *testing.T, st store.Store, dir string, idle time.Duration) string {
	t.Helper()
	ctx := context.Background()
	refs, err := st.List(ctx)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	var newest time.Time
	for _, ref := range refs {
		if s, err := st.Load(ctx, ref); err == nil {
			if a := opencode.LastActivity(s); a.After(newest) {
				newest = a
			}
		}
	}
	if !newest.IsZero() {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			return os.Chtimes(path, newest, newest)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var b strings.Builder
	for _, ref := range refs {
		s, err := st.Load(ctx, ref)
		if err != nil {
			s = &store.Session{Store: st.Info(), ID: ref.ID}
			s.Broken = append(s.Broken, &store.Record{Kind: store.KindSession, ID: ref.ID, Err: err})
		}
		now := s.LastModified().Add(idle)
		opts := &Options{Now: func() time.Time { return now }, Activity: opencode.StoreActivity([]store.Store{st})}
		for _, f := range CheckSession(s, opts) {
			b.WriteString(goldenLine(f))
		}
	}
	return b.String()
}

func goldenLine(f Finding) string {
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	return fmt.Sprintf("%s %s %s %s %s\n", f.Code, f.Severity, dash(f.MessageID), dash(f.PartID), f.Message)
}

// TestDemoStore checks the store the README's first command scans: one
// healthy session and one session per typical problem, with the real clock.
func TestDemoStore(t *testing.T) {
	st := storetest.OpenOne(t, filepath.Join("..", "..", "testdata", "demo"))
	ctx := context.Background()
	refs, err := st.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"Add a health check endpoint": "",
		"Speed up the test suite":     "SF105 SF153 SF155 SF301",
		"Explain the config loader":   "SF151",
		"Fix the lint errors":         "SF101 SF152 SF302",
	}
	if len(refs) != len(want) {
		t.Fatalf("demo store has %d sessions, want %d", len(refs), len(want))
	}
	for _, ref := range refs {
		s, err := st.Load(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		codes := map[string]bool{}
		for _, f := range CheckSession(s, nil) {
			codes[f.Code] = true
		}
		var got []string
		for c := range codes {
			got = append(got, c)
		}
		sort.Strings(got)
		exp, ok := want[s.Title]
		if !ok {
			t.Errorf("unexpected demo session %q", s.Title)
			continue
		}
		if strings.Join(got, " ") != exp {
			t.Errorf("demo session %q: codes %v, want %q", s.Title, got, exp)
		}
	}
}

// TestFixtureNamesSayWhatTheyTest keeps the case names honest: a case that
// expects no finding is named …-negative, and a positive case named after a
// rule (sfNNN-…) expects a finding of that rule.
func TestFixtureNamesSayWhatTheyTest(t *testing.T) {
	for _, c := range storetest.Cases(t, fixtureRoot) {
		b, err := os.ReadFile(filepath.Join(c.Dir, "expected.txt"))
		if err != nil {
			t.Fatal(err)
		}
		negative := strings.HasSuffix(c.Name, "-negative")
		if len(b) == 0 && !negative {
			t.Errorf("%s expects no finding: name it …-negative", c.Name)
		}
		code, _, _ := strings.Cut(c.Name, "-")
		if negative || len(code) != 5 || !strings.HasPrefix(code, "sf") {
			continue
		}
		if want := strings.ToUpper(code) + " "; !strings.HasPrefix(string(b), want) && !strings.Contains(string(b), "\n"+want) {
			t.Errorf("%s expects no %s finding: name it after what it tests", c.Name, strings.ToUpper(code))
		}
	}
}
