//go:build acceptance

package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestRealStoreFixAndUndo proves on real OpenCode data (1.18.33's SQLite
// database, 1.1.65's storage/ tree) what issues 2 and 3 ask of the store as
// a whole:
//   - `sessfix scan` with no arguments finds the data dir's store through
//     XDG_DATA_HOME and reports nothing on the healthy sessions;
//   - with problems injected, `fix --yes` leaves no warning or error, a
//     second `fix` changes nothing, and `undo --last` restores every row
//     (SQLite: every column of every session, message and part row) or
//     every file (storage/) exactly as it was before the fix.
func TestRealStoreFixAndUndo(t *testing.T) {
	parallel(t)
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			b, c := onBase(t, version)
			e, d := c.e, c.d

			// No arguments: discovery finds the real store, healthy.
			// (The base also holds the `cut` session, killed after a tool
			// result: that one is damaged on purpose.)
			res := sessfix(t, e, "scan", "--format", "json")
			if res.ExitCode != 0 && res.ExitCode != 1 {
				t.Fatalf("scan of the real data dir:\n%s", res)
			}
			var doc scanDoc
			if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil {
				t.Fatalf("scan JSON: %v\n%s", err, res)
			}
			wantShape, wantPath := "storage", e.StorageDir()
			if d.sqlite() {
				wantShape, wantPath = "sqlite", e.DBPath()
			}
			if len(doc.Stores) != 1 || doc.Stores[0].Shape != wantShape || doc.Stores[0].Path != wantPath {
				t.Fatalf("discovered stores %+v, want one %s store at %s", doc.Stores, wantShape, wantPath)
			}
			for _, f := range doc.Findings {
				if f.Session == b.loop {
					t.Fatalf("the healthy real session has findings: %+v", f)
				}
			}

			// Inject two problems users hit into the loop session.
			first := c.assistant(1)
			d.setPart(first.ID, c.part(first, "text").ID, "text", " \n ")
			tool := c.assistant(0)
			p := c.part(tool, "tool")
			d.setPart(tool.ID, p.ID, "state.status", "running")
			d.deletePaths(tool.ID, p.ID, "state.output", "state.time.end", "state.time.compacted")

			before := storeState(t, d)
			if res := sessfix(t, e, "scan"); res.ExitCode != 1 {
				t.Fatalf("scan of the damaged store should exit 1:\n%s", res)
			}
			if res := sessfix(t, e, "fix", "--yes"); res.ExitCode != 0 {
				t.Fatalf("fix --yes:\n%s", res)
			}
			fixed := storeState(t, d)
			if fixed == before {
				t.Fatal("fix --yes changed nothing")
			}
			if res := sessfix(t, e, "scan", "--fail-on", "warning"); res.ExitCode != 0 {
				t.Fatalf("after the fix scan still fails:\n%s", res)
			}
			again := sessfix(t, e, "fix", "--yes")
			if again.ExitCode != 0 || !strings.Contains(again.Stderr+again.Stdout, "nothing to change") || storeState(t, d) != fixed {
				t.Fatalf("a second fix should change nothing:\n%s", again)
			}
			if res := sessfix(t, e, "undo", "--last"); res.ExitCode != 0 {
				t.Fatalf("undo --last:\n%s", res)
			}
			if got := storeState(t, d); got != before {
				t.Fatalf("undo did not restore the store exactly:\nbefore %s\nafter  %s", before, got)
			}
		})
	}
}

// storeState hashes what OpenCode reads from the data dir: every column of
// every session, message and part row (SQLite), or every file under
// storage/ with its path.
func storeState(t *testing.T, d dataDir) string {
	t.Helper()
	if d.sqlite() {
		return tablesState(t, d, "session", "message", "part")
	}
	h := sha256.New()
	root := filepath.Join(d.dir, "storage")
	var files []string
	err := filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.Type().IsRegular() && !strings.HasPrefix(de.Name(), ".sessfix") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(h, "%s %x\n", rel, sha256.Sum256(b))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// tablesState hashes every column of every row of the named tables of the
// data dir's database.
func tablesState(t *testing.T, d dataDir, tables ...string) string {
	t.Helper()
	h := sha256.New()
	db := d.db()
	defer db.Close()
	for _, table := range tables {
		rows, err := db.Query("SELECT * FROM " + table + " ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(h, "%s", table)
			for i, v := range vals {
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				fmt.Fprintf(h, "|%s=%v", cols[i], v)
			}
			fmt.Fprintln(h)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return hex.EncodeToString(h.Sum(nil))
}
