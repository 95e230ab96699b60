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
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// TestFixRefusesOpenCode2Databases: a repair the 1.x rules would plan in
// an OpenCode 2 database (here a blank text part in a session only the 1.x
// tables hold) is never planned: fix, --dry-run and --yes alike, says up
// front that the store is read only (*store.ReadOnlyError, exit 3) with
// what to do instead, and shows no plan and no edit count it would not
// write. Not a byte of the database changes and no backup run is left.
func TestFixRefusesOpenCode2Databases(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "opencode2", "after-import", "opencode.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "opencode.db")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	storetest.ExecSQL(t, path, `UPDATE part SET data = json_set(data, '$.text', ' ') WHERE id = 'prt_20958dcb6001AfterImport29N'`)
	before := storetest.Hash(t, path, store.ShapeSQLite2)

	journal := backup.Options{Dir: t.TempDir(), Now: func() time.Time { return clock }}
	for _, mode := range []string{"ask", "dry run", "yes"} {
		e := newEnv(path)
		e.opts.Force = true
		e.opts.Factory.Prompter = &cli.StubPrompter{Terminal: true, Answer: func(string) (bool, error) {
			t.Errorf("%s: asked to write a read-only store", mode)
			return true, nil
		}}
		e.opts.DryRun, e.opts.Yes = mode == "dry run", mode == "yes"
		e.opts.Apply = func(ctx context.Context, info store.Info, sets []*store.ChangeSet) (string, error) {
			t.Errorf("%s: a write was attempted", mode)
			return backup.Apply(ctx, journal, info, sets)
		}
		err := e.run(t)
		var ro *store.ReadOnlyError
		if !errors.As(err, &ro) || !errors.Is(err, store.ErrUnsupported) || !strings.Contains(err.Error(), "never writes it") {
			t.Fatalf("%s: %v\n%s", mode, err, e.errOut)
		}
		said := e.out.String() + e.errOut.String()
		if strings.Contains(said, "edit") || strings.Contains(said, "SF151") || strings.Contains(said, "nothing to change") {
			t.Errorf("%s: a plan for a store fix never writes:\n%s", mode, said)
		}
		if h := cli.Hints(err); len(h) != 1 || !strings.Contains(h[0], "opencode export") {
			t.Errorf("%s: hints %q, want what to do instead", mode, h)
		}
	}
	if storetest.Hash(t, path, store.ShapeSQLite2) != before {
		t.Error("the OpenCode 2 database changed")
	}
	if runs, err := backup.List(journal); err != nil || len(runs) != 0 {
		t.Errorf("backup runs %v (%v), want none", runs, err)
	}
}
