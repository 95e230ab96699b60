package scan

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// realStores are the healthy sessions recorded with real OpenCode.
var realStores = []struct {
	path    string
	version sent.Version
}{
	{"../../testdata/real/opencode-1.18.33/opencode.db", sent.V118},
	{"../../testdata/real/opencode-1.1.65/storage", sent.V11},
}

func loadReal(t *testing.T, path string) []*store.Session {
	t.Helper()
	out := storetest.LoadAll(t, storetest.OpenOne(t, path))
	if len(out) != 3 {
		t.Fatalf("%s: %d sessions, want 3", path, len(out))
	}
	return out
}

// realShapes are the requests a resume of each recorded session sends (the
// history and the next prompt): each assistant step is its own message,
// starting with its signed thinking, and tool results go in the next user
// message (internal/opencodetest/OBSERVED.md).
var realShapes = []string{
	"0 user [text]\n1 assistant [thinking text]\n2 user [text]\n",
	"0 user [text]\n1 assistant [thinking tool_use]\n2 user [tool_result]\n3 assistant [thinking text]\n4 user [text]\n",
	"0 user [text]\n1 assistant [thinking text]\n2 user [text]\n3 assistant [thinking text]\n4 user [text]\n",
}

// renderRequest prints a request compactly: one line per message with its
// blocks' types.
func renderRequest(r *sent.Request) string {
	var b strings.Builder
	for n, pm := range r.Messages {
		var types []string
		for _, bl := range pm.Blocks {
			types = append(types, bl.Type)
		}
		fmt.Fprintf(&b, "%d %s [%s]\n", n, pm.Role, strings.Join(types, " "))
	}
	return b.String()
}

// TestRealSessionsHaveNoPreflightFindings: the six sessions real OpenCode
// recorded were all accepted by the strict mock, so the preflight must find
// nothing in them, and it must pick each store's conversion.
func TestRealSessionsHaveNoPreflightFindings(t *testing.T) {
	for _, rs := range realStores {
		t.Run(filepath.Base(filepath.Dir(rs.path)), func(t *testing.T) {
			seen := map[string]bool{}
			for _, s := range loadReal(t, rs.path) {
				if v := sent.VersionOf(s); v != rs.version {
					t.Errorf("session %s: version %s, want %s", s.ID, v, rs.version)
				}
				now := s.LastModified().Add(time.Hour)
				opts := &Options{Now: func() time.Time { return now }}
				if vs := Preflight(s, opts); len(vs) > 0 {
					t.Errorf("session %s: preflight violations %+v\n%s", s.ID, vs, renderRequest(sent.Build(s, sent.Options{NextPrompt: true})))
				}
				for _, f := range CheckSession(s, opts) {
					t.Errorf("session %s: finding %s %s", s.ID, f.Code, f.Message)
				}
				got := renderRequest(sent.Build(s, sent.Options{NextPrompt: true}))
				if !seen[got] && !slices.Contains(realShapes, got) {
					t.Errorf("session %s: request\n%s is none of the recorded shapes", s.ID, got)
				}
				seen[got] = true
			}
			if len(seen) != len(realShapes) {
				t.Errorf("saw %d request shapes, want %d", len(seen), len(realShapes))
			}
		})
	}
}

// TestEveryRealStoreScansClean: every store real OpenCode recorded, with
// every provider family, was accepted by the family's strict mock, so
// neither the preflight nor any rule may report anything at warning or
// above in it. New recordings under testdata/real join by themselves.
func TestEveryRealStoreScansClean(t *testing.T) {
	dirs, err := filepath.Glob("../../testdata/real/opencode-*")
	if err != nil || len(dirs) < 6 {
		t.Fatalf("recordings: %v, %v", dirs, err)
	}
	for _, dir := range dirs {
		path := filepath.Join(dir, "opencode.db")
		if _, err := os.Stat(path); err != nil {
			path = filepath.Join(dir, "storage")
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			sessions := storetest.LoadAll(t, storetest.OpenOne(t, path))
			if len(sessions) == 0 {
				t.Fatal("no sessions")
			}
			for _, s := range sessions {
				now := s.LastModified().Add(time.Hour)
				opts := &Options{Now: func() time.Time { return now }}
				r := sent.Build(s, sent.Options{NextPrompt: true})
				if r.Kind == sent.Other {
					t.Errorf("session %s: model %s/%s is in no modelled family", s.ID, r.ProviderID, r.ModelID)
				}
				for _, v := range Preflight(s, opts) {
					t.Errorf("session %s (%s): %s %s at %s: %s\n%s", s.ID, r.Kind, v.Code, v.Message, v.Index, v.ProviderError, renderRequest(r))
				}
				for _, f := range CheckSession(s, opts) {
					if f.Severity >= Warning {
						t.Errorf("session %s (%s): finding %s %s", s.ID, r.Kind, f.Code, f.Message)
					}
				}
			}
		})
	}
}
