package fix

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// TestFixRefusesOpenCode2Databases: a repair the 1.x rules plan in an
// OpenCode 2 database (here a blank text part in a session only the 1.x
// tables hold) is refused with a *store.ReadOnlyError, which says why and
// exits 3; not a byte of the database changes and no backup run is left.
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

	dry := newEnv(path)
	dry.opts.Force = true
	// The plan is shown: the refusal comes from the writer, for every table.
	err = dry.run(t)
	if said := fmt.Sprint(err) + dry.errOut.String(); !strings.Contains(said, "1 edit") || !strings.Contains(said, "1 session") {
		t.Fatalf("dry run: %v\n%s", err, dry.errOut)
	}

	journal := backup.Options{Dir: t.TempDir(), Now: func() time.Time { return clock }}
	e := newEnv(path)
	e.opts.Yes, e.opts.Force = true, true
	e.opts.Apply = func(ctx context.Context, info store.Info, sets []*store.ChangeSet) (string, error) {
		return backup.Apply(ctx, journal, info, sets)
	}
	err = e.run(t)
	var ro *store.ReadOnlyError
	if !errors.As(err, &ro) || !errors.Is(err, store.ErrUnsupported) || !strings.Contains(err.Error(), "no OpenCode 2 build can be installed") {
		t.Fatalf("fix --yes on an OpenCode 2 database: %v\n%s", err, e.errOut)
	}
	if storetest.Hash(t, path, store.ShapeSQLite2) != before {
		t.Error("the OpenCode 2 database changed")
	}
	if runs, err := backup.List(journal); err != nil || len(runs) != 0 {
		t.Errorf("backup runs %v (%v), want none", runs, err)
	}
}
