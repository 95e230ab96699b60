package salvage_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/store/sqlite/salvage"
)

// rows is every row of every table of the database at path, by table, as
// "rowid|values" lines in rowid order.
func rows(t *testing.T, path string) map[string][]string {
	t.Helper()
	db := open(t, path)
	tables := query(t, db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
	out := map[string][]string{}
	for _, name := range tables {
		var cols []string
		for _, c := range query(t, db, "SELECT name FROM pragma_table_info(?) ORDER BY cid", name) {
			cols = append(cols, fmt.Sprintf("quote(%q)", c))
		}
		out[name] = query(t, db, fmt.Sprintf("SELECT rowid || '|' || %s FROM %q ORDER BY rowid", strings.Join(cols, " || ',' || "), name))
	}
	return out
}

func open(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func query(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	r, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer r.Close()
	var out []string
	for r.Next() {
		var s string
		if err := r.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := r.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// salvageCopy salvages src into a new file in a new directory and checks
// what every salvage must give: the source unchanged and alone in its
// directory, the destination passing integrity_check.
func salvageCopy(t *testing.T, src string) (string, *salvage.Report) {
	t.Helper()
	before := snapshot(t, filepath.Dir(src))
	dst := filepath.Join(t.TempDir(), "salvaged.db")
	rep, err := salvage.Salvage(context.Background(), src, dst)
	if err != nil {
		t.Fatalf("salvage: %v", err)
	}
	if after := snapshot(t, filepath.Dir(src)); !slices.Equal(before, after) {
		t.Errorf("the source's directory changed:\nbefore %v\nafter  %v", before, after)
	}
	if rep.Integrity != "ok" {
		t.Errorf("integrity %q", rep.Integrity)
	}
	if got := query(t, open(t, dst), "PRAGMA integrity_check"); !slices.Equal(got, []string{"ok"}) {
		t.Errorf("integrity_check of the salvaged database: %v", got)
	}
	entries, _ := os.ReadDir(filepath.Dir(dst))
	if len(entries) != 1 {
		t.Errorf("the destination's directory holds %d files, want the database alone", len(entries))
	}
	return dst, rep
}

// snapshot names and hashes every file of dir.
func snapshot(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %x", e.Name(), sha256.Sum256(b)))
	}
	return out
}

// sameRows fails unless want and got hold the same rows in every table
// but those in except.
func sameRows(t *testing.T, want, got map[string][]string, except ...string) {
	t.Helper()
	for name, w := range want {
		if slices.Contains(except, name) {
			continue
		}
		if g := got[name]; !slices.Equal(w, g) {
			t.Errorf("table %s: %d rows salvaged, want %d the same", name, len(g), len(w))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("salvaged database has a table %s the source has not", name)
		}
	}
}

func TestHealthyDatabaseSalvagesWhole(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	want := rows(t, rs.Path)
	dst, rep := salvageCopy(t, rs.Path)
	sameRows(t, want, rows(t, dst))
	if !rep.Whole() || rep.Method != salvage.MethodSQL {
		t.Errorf("report: method %s, whole %v: %+v", rep.Method, rep.Whole(), rep)
	}
	if got := rep.Table("part"); got == nil || got.Read != int64(len(want["part"])) {
		t.Errorf("part report %+v, want %d rows read", got, len(want["part"]))
	}
	src, out := open(t, rs.Path), open(t, dst)
	for _, q := range []string{
		"SELECT type || ' ' || name || ' ' || tbl_name || ' ' || coalesce(sql, '') FROM sqlite_master ORDER BY type, name",
		"PRAGMA page_size", "PRAGMA user_version", "PRAGMA application_id", "PRAGMA encoding", "PRAGMA auto_vacuum",
	} {
		if w, g := query(t, src, q), query(t, out, q); !slices.Equal(w, g) {
			t.Errorf("%s: got %v, want %v", q, g, w)
		}
	}
}

func itoa(n int) string { return fmt.Sprint(n) }
