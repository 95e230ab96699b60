//go:build unix

package sqlitedb_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/internal/sqlitedb"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// bigSessions is a database of n sessions, each with four text parts of
// about 256 KiB, so that its rows fill pages far past the first.
func bigSessions(t *testing.T, n int) string {
	t.Helper()
	var fs []*storetest.Fixture
	text, _ := json.Marshal(strings.Repeat("0123456789abcdef", 16<<10))
	for i := range n {
		var parts []storetest.Part
		for j := range 4 {
			parts = append(parts, storetest.Part{ID: fmt.Sprintf("prt_00000000000100000000000%d%02d", j, i), Body: json.RawMessage(`{"type":"text","text":` + string(text) + `}`)})
		}
		fs = append(fs, &storetest.Fixture{ID: fmt.Sprintf("ses_7ffffffffff0dddddddddddd%02d", i), Title: "big", Messages: []storetest.Message{
			{ID: fmt.Sprintf("msg_000000000001000000000000%02d", i), Body: json.RawMessage(`{"role":"user","time":{"created":1000}}`), Parts: parts},
		}})
	}
	path := storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), fs...)
	storetest.ExecSQL(t, path, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return path
}

func noCheck(context.Context, *sql.DB, string) error { return nil }

func mmapSize(t *testing.T, db *sql.DB) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(`PRAGMA mmap_size`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The readers of scan, show and the other commands map the database
// (OpenMapped); salvage's reads of a damaged file (OpenMode) do not.
func TestOpenMappedMapsAndOpenModeDoesNot(t *testing.T) {
	path := bigSessions(t, 1)
	d, err := sqlitedb.OpenMapped(path, noCheck)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if n := mmapSize(t, d.SQL); n <= 0 {
		t.Errorf("OpenMapped: mmap_size %d, want the file mapped", n)
	}
	u, err := sqlitedb.OpenMode(path, path, sqlitedb.ReadOnly, noCheck)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if n := mmapSize(t, u.SQL); n != 0 {
		t.Errorf("OpenMode: mmap_size %d, want 0", n)
	}
}

// A session read through the map after another program cut the file short
// faults: Load returns an error naming the file and what to do instead of
// ending the process, and every later read of the store fails with it
// without reading the changed file again.
func TestAFileCutShortWhileMappedIsAnError(t *testing.T) {
	path := bigSessions(t, 2)
	d, err := sqlitedb.OpenMapped(path, noCheck)
	if err != nil {
		t.Fatal(err)
	}
	v := sqlitedb.NewV1(d, store.Info{Shape: store.ShapeSQLite, Path: path})
	defer v.Close()
	ctx := context.Background()
	refs, err := v.List(ctx)
	if err != nil || len(refs) != 2 {
		t.Fatalf("List: %v, %v", refs, err)
	}
	// The file is cut short right after the first part row, while the
	// query that reads the others runs.
	sqlitedb.SetAfterPartRow(v, func() {
		if err := os.Truncate(path, 4096); err != nil {
			t.Error(err)
		}
	})
	_, err = v.Load(ctx, refs[0])
	if err == nil || !strings.Contains(err.Error(), "changed while it was read") || !strings.Contains(err.Error(), filepath.Base(path)) {
		t.Fatalf("Load of a file cut short: %v; want the file named and changed while read", err)
	}
	_, again := v.Load(ctx, refs[1])
	if again == nil || again.Error() != err.Error() {
		t.Errorf("Load after the fault: %v; want the same error (%v)", again, err)
	}
	if _, lerr := v.List(ctx); !errors.Is(lerr, err) && (lerr == nil || lerr.Error() != err.Error()) {
		t.Errorf("List after the fault: %v; want the same error", lerr)
	}
}
