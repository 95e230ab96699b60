package oc2fixture

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest"
)

const (
	baseDB   = "../../../testdata/real/opencode-1.18.33/opencode.db"
	fixtures = "../../../testdata/opencode2"
)

func build(t *testing.T, name string) (string, []Warning) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "opencode.db")
	w, err := Build(name, baseDB, path)
	if err != nil {
		t.Fatal(err)
	}
	return path, w
}

// TestFixturesUpToDate rebuilds every fixture: the committed ones must hold
// the same schema and rows, and the same import warnings.
func TestFixturesUpToDate(t *testing.T) {
	for _, name := range Names {
		t.Run(name, func(t *testing.T) {
			path, warnings := build(t, name)
			got, err := Dump(path)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Dump(filepath.Join(fixtures, name, "opencode.db"))
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("testdata/opencode2/%s/opencode.db is not what the generator builds; run go generate ./internal/opencodetest/oc2fixture/", name)
			}
			if name == Native {
				return
			}
			b, err := os.ReadFile(filepath.Join(fixtures, name, "import-warnings.json"))
			if err != nil {
				t.Fatal(err)
			}
			var committed []Warning
			if err := json.Unmarshal(b, &committed); err != nil {
				t.Fatal(err)
			}
			if warnings == nil {
				warnings = []Warning{}
			}
			if !slices.EqualFunc(committed, warnings, func(a, b Warning) bool {
				return a.Reason == b.Reason && a.PartID == b.PartID && a.MessageID == b.MessageID
			}) {
				t.Fatalf("import-warnings.json %v, the build logs %v", committed, warnings)
			}
		})
	}
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

func ids(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	out, err := opencodetest.QueryIDs(db, q)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAfterImport: the import is recorded as completed, every session it
// saw is in session_v2 with its messages, and the two made afterwards are
// only in the 1.x tables.
func TestAfterImport(t *testing.T) {
	path, warnings := build(t, AfterImport)
	db := open(t, path)
	if len(warnings) != 0 {
		t.Errorf("warnings %v", warnings)
	}
	var kv string
	if err := db.QueryRow(`SELECT value FROM kv WHERE key = 'migration.v1-v2'`).Scan(&kv); err != nil || kv != `{"phase":"completed"}` {
		t.Fatalf("kv %q %v", kv, err)
	}
	missing := ids(t, db, `SELECT id FROM session WHERE id NOT IN (SELECT id FROM session_v2) ORDER BY id`)
	want := []string{CloneID(realPlain, "after-import-2", After+3600000), CloneID(realLoop, "after-import-1", After)}
	slices.Sort(want)
	if !slices.Equal(missing, want) {
		t.Fatalf("1.x sessions missing from session_v2: %v, want %v", missing, want)
	}
	var n int
	_ = db.QueryRow(`SELECT count(*) FROM message WHERE session_id = ?`, want[0]).Scan(&n)
	if n == 0 {
		t.Fatal("the sessions made after the import have no messages")
	}
	types := ids(t, db, `SELECT type FROM session_message WHERE session_id = '`+realLoop+`' ORDER BY seq`)
	if !slices.Equal(types, []string{"user", "assistant", "assistant", "system"}) {
		t.Fatalf("the imported tool loop: %v", types)
	}
}

// TestRejectedRows: each damaged row is named in a warning and absent from
// session_message; the rest of its session is there.
func TestRejectedRows(t *testing.T) {
	path, warnings := build(t, RejectedRows)
	db := open(t, path)
	reasons := map[string]int{}
	for _, w := range warnings {
		reasons[w.Reason]++
		if w.MessageID != "" && w.PartID == "" {
			var n int
			_ = db.QueryRow(`SELECT count(*) FROM session_message WHERE id = ?`, w.MessageID).Scan(&n)
			if n != 0 {
				t.Errorf("rejected message %s was imported", w.MessageID)
			}
		}
	}
	if reasons["invalid-message"] != 3 || reasons["invalid-part"] != 1 || reasons["orphan-part"] != 1 || reasons["reassigned-project"] != 1 {
		t.Fatalf("warnings %v", warnings)
	}
	multi := CloneID(realMulti, rejectedMulti, After)
	types := ids(t, db, `SELECT type FROM session_message WHERE session_id = '`+multi+`' ORDER BY seq`)
	if !slices.Equal(types, []string{"user", "assistant"}) {
		t.Fatalf("what survives of the damaged session: %v", types)
	}
	var project string
	_ = db.QueryRow(`SELECT project_id FROM session_v2 WHERE id = ?`, multi).Scan(&project)
	if project != "global" {
		t.Fatalf("a session of a missing project goes to global, got %q", project)
	}
}

// TestNative: only 2.x tables, and every message type.
func TestNative(t *testing.T) {
	path, _ := build(t, Native)
	db := open(t, path)
	if got := ids(t, db, `SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('session', 'message', 'part')`); len(got) != 0 {
		t.Fatalf("1.x tables in a native database: %v", got)
	}
	types := ids(t, db, `SELECT DISTINCT type FROM session_message ORDER BY type`)
	want := []string{"agent-switched", "assistant", "compaction", "idle", "model-switched", "shell", "synthetic", "system", "user"}
	if !slices.Equal(types, want) {
		t.Fatalf("types %v", types)
	}
	// seq orders each session's messages without gaps.
	rows, err := db.Query(`SELECT session_id, count(*), max(seq) FROM session_message GROUP BY session_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		var n, max int
		_ = rows.Scan(&s, &n, &max)
		if max != n-1 {
			t.Errorf("%s: %d messages, last seq %d", s, n, max)
		}
	}
}
