package salvage_test

import (
	"database/sql"
	"slices"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/store/sqlite/salvage"
)

// walWriter puts the copy in WAL mode and renames every session through a
// connection that stays open (as OpenCode's does), so the new titles are
// only in the -wal file.
func walWriter(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("UPDATE session SET title = 'from the log'"); err != nil {
		t.Fatal(err)
	}
}

func titles(t *testing.T, path string) []string {
	t.Helper()
	return query(t, open(t, path), "SELECT DISTINCT title FROM session")
}

func TestWALContentIsSalvaged(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	walWriter(t, rs.Path)
	dst, rep := salvageCopy(t, rs.Path)
	if got := titles(t, dst); !slices.Equal(got, []string{"from the log"}) {
		t.Errorf("titles %v, want the log's", got)
	}
	if rep.Method != salvage.MethodSQL || !strings.Contains(strings.Join(rep.Notes, "\n"), "snapshot copy") {
		t.Errorf("method %s, notes %v", rep.Method, rep.Notes)
	}
}

func TestPageScanReadsTheLog(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	walWriter(t, rs.Path)
	rs.OverwritePage(t, 1) // the file's page 1; the log holds no copy of it
	dst, rep := salvageCopy(t, rs.Path)
	if rep.Method != salvage.MethodPages {
		t.Fatalf("method %s", rep.Method)
	}
	if got := titles(t, dst); !slices.Equal(got, []string{"from the log"}) {
		t.Errorf("titles %v, want the log's", got)
	}
}
