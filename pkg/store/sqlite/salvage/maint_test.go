package salvage_test

import (
	"context"
	"database/sql"
	"os"
	"slices"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/store/sqlite/salvage"
)

func TestReindexRepairsADamagedIndex(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	want := rows(t, rs.Path)
	rs.OverwritePage(t, rs.RootPage(t, "part_session_idx"))
	var check string
	if err := open(t, rs.Path).QueryRow("PRAGMA integrity_check").Scan(&check); err == nil && check == "ok" {
		t.Fatal("the damaged copy passes integrity_check")
	}
	if err := salvage.Reindex(context.Background(), rs.Path); err != nil {
		t.Fatal(err)
	}
	if got := query(t, open(t, rs.Path), "PRAGMA integrity_check"); !slices.Equal(got, []string{"ok"}) {
		t.Errorf("integrity_check after Reindex: %v", got)
	}
	sameRows(t, want, rows(t, rs.Path))
}

func TestReindexReportsTableDamage(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	rs.OverwritePage(t, rs.RootPage(t, "message"))
	if err := salvage.Reindex(context.Background(), rs.Path); err == nil {
		t.Fatal("Reindex of a database with a destroyed table page succeeded")
	}
}

func TestCheckpointMergesTheLog(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	// Another connection (OpenCode's) writes in WAL mode and stays open,
	// so the rows stay in the -wal file until the checkpoint.
	db, err := sql.Open("sqlite", "file:"+rs.Path+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("UPDATE session SET title = 'after the log'"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(rs.Path + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("no write-ahead log content: %v", err)
	}
	if err := salvage.Checkpoint(context.Background(), rs.Path); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(rs.Path + "-wal"); err != nil || fi.Size() != 0 {
		t.Errorf("the -wal file is not truncated: %v", err)
	}
	file, err := sql.Open("sqlite", "file:"+rs.Path+"?mode=ro&immutable=1") // the file alone, no log
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if got := query(t, file, "SELECT DISTINCT title FROM session"); !slices.Equal(got, []string{"after the log"}) {
		t.Errorf("the database file holds titles %v", got)
	}
}
