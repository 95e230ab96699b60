package fix

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// TestFixNeverLeavesASessionWorse: a session whose session record is
// unreadable (truncated). Quarantining the record would leave the session
// without one, which OpenCode does not list (SF203; fix rebuilds the record
// from the messages only when they name one project, and this fixture's
// worktree has no project record): a fix must never leave a store with
// more or worse findings than it found. The plan leaves the record alone and says why (a dry run shows
// it), and after `fix --yes` a scan finds nothing it did not find before.
// In the sessions layout, whose session.json is optional, the record is
// quarantined: nothing gets worse there.
func TestFixNeverLeavesASessionWorse(t *testing.T) {
	for _, shape := range []store.Shape{store.ShapeStorage, store.ShapeSessions, store.ShapeProject} {
		t.Run(string(shape), func(t *testing.T) {
			path := materialize(t, shape, "tool-loop-negative")
			var info string
			_ = filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "ses_") || err == nil && d.Name() == "session.json" {
					info = p
				}
				return nil
			})
			if info == "" {
				t.Fatalf("no session record under %s", path)
			}
			b, err := os.ReadFile(info)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(info, b[:len(b)/2], 0o644); err != nil {
				t.Fatal(err)
			}
			before := codes(t, path)

			dry := newEnv(path)
			dry.opts.DryRun = true
			_ = dry.run(t)
			if shape != store.ShapeSessions && !strings.Contains(dry.out.String(), "not fixed: quarantine would cause SF203") {
				t.Errorf("the dry run does not say why the record is left alone:\n%s%s", dry.out, dry.errOut)
			}
			e := newEnv(path)
			e.opts.Yes = true
			if err := e.run(t); err != nil && !errors.Is(err, cli.ErrFindings) {
				t.Fatalf("fix: %v\n%s", err, e.errOut)
			}
			after := codes(t, path)
			for code, n := range after {
				if n > before[code] {
					t.Errorf("after fix %d %s findings, before %d:\n%s", n, code, before[code], e.errOut)
				}
			}
		})
	}
}

// codes counts a store's findings by code.
func codes(t *testing.T, path string) map[string]int {
	t.Helper()
	st := storetest.OpenOne(t, path)
	defer st.Close()
	res, err := scan.Run(context.Background(), []store.Store{st}, &scan.Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, f := range res.Findings {
		out[f.Code]++
	}
	return out
}
