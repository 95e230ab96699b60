package salvage

import (
	"database/sql"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
)

var update = flag.Bool("update", false, "rewrite the embedded schema from testdata/real")

// realDB is the recorded 1.18.33 database (read only).
func realDB(t *testing.T) *sql.DB {
	t.Helper()
	path := filepath.Join("..", "..", "..", "..", "testdata", "real", "opencode-"+ocrelease.V1_18, "opencode.db")
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func column(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	out, err := strings1(t.Context(), db, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// TestEmbeddedSchema checks the embedded schema and migrations against
// the recorded database's sqlite_master and migration table.
func TestEmbeddedSchema(t *testing.T) {
	if KnownVersion != ocrelease.V1_18 {
		t.Fatalf("embedded schema of %s, recorded database of %s", KnownVersion, ocrelease.V1_18)
	}
	db := realDB(t)
	stmts := column(t, db, "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")
	migrations := column(t, db, "SELECT id || char(9) || time_completed FROM "+migrationTable+" ORDER BY rowid")
	if *update {
		if err := os.WriteFile("schema-"+KnownVersion+".sql", []byte(strings.Join(stmts, ";\n\n")+";\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("migrations-"+KnownVersion+".tsv", []byte(strings.Join(migrations, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := knownStatements(); !slices.Equal(got, stmts) {
		t.Errorf("embedded schema has %d statements, the recorded database %d, or they differ: run go test -run TestEmbeddedSchema -update", len(got), len(stmts))
	}
	if got := strings.Split(strings.TrimSpace(knownMigrations), "\n"); !slices.Equal(got, migrations) {
		t.Errorf("embedded migrations differ from the recorded database's %d rows", len(migrations))
	}
}
