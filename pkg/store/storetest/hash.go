package storetest

import (
	"crypto/sha256"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
)

// MaterializeCases writes the fixture cases named (directories of root
// holding session.json, as testdata/sessions does) into one store of the
// shape under a new temporary directory, and dates every file at, so the
// sessions count as quiet for a clock after it. It returns the store path.
func MaterializeCases(t testing.TB, shape store.Shape, root string, at time.Time, cases ...string) string {
	t.Helper()
	var fxs []*Fixture
	for _, c := range cases {
		fx, err := LoadExportFixture(filepath.Join(root, c, "session.json"))
		if err != nil {
			t.Fatal(err)
		}
		fxs = append(fxs, fx)
	}
	dir := t.TempDir()
	path := Materialize(t, shape, dir, fxs...)
	SetTimes(t, dir, at)
	return path
}

// SetTimes sets the access and modification times of root and of
// everything under it.
func SetTimes(t testing.TB, root string, at time.Time) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, at, at)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Hash hashes every file of a JSON store or export file (its name and
// bytes; sessfix's writer lock left out), or every loaded record of a
// database (SQLite rewrites pages, so its file bytes are not compared).
func Hash(t testing.TB, path string, shape store.Shape) string {
	t.Helper()
	h := sha256.New()
	if shape != store.ShapeSQLite {
		var files []string
		_ = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.HasSuffix(p, ".sessfix.lock") {
				files = append(files, p)
			}
			return nil
		})
		sort.Strings(files)
		for _, p := range files {
			b, _ := os.ReadFile(p)
			fmt.Fprintf(h, "%s\x00%x\x00", strings.TrimPrefix(p, path), sha256.Sum256(b))
		}
		return fmt.Sprintf("%x", h.Sum(nil))
	}
	// Closed before the caller writes again (OpenOne's cleanup closes it
	// too, at the end of the test).
	st := OpenOne(t, path)
	defer st.Close()
	for _, s := range LoadAll(t, st) {
		for _, m := range s.Messages {
			fmt.Fprintf(h, "m %s %s\n", m.ID, m.Raw)
			for _, p := range m.Parts {
				fmt.Fprintf(h, "p %s %s\n", p.ID, p.Raw)
			}
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// State renders a whole store, for byte-for-byte comparisons: for a
// database every row of every table (sqlite_master included, so triggers
// and indexes count) with its rowid and every column, a BLOB told from a
// TEXT; for a JSON store every directory and file under it (path, mode,
// sha256 of the bytes); for an export file its bytes and mode. sessfix's
// writer lock is left out: it is not the store's data.
func State(t testing.TB, path string, shape store.Shape) string {
	t.Helper()
	var b strings.Builder
	switch shape {
	case store.ShapeSQLite:
		db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var tables []string
		rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			tables = append(tables, n)
		}
		rows.Close()
		for _, tbl := range append([]string{"sqlite_master"}, tables...) {
			rows, err := db.Query(`SELECT rowid, * FROM "` + tbl + `" ORDER BY rowid`)
			if err != nil {
				t.Fatal(err)
			}
			cols, _ := rows.Columns()
			for rows.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&b, "%s %#v\n", tbl, vals) // %#v: a BLOB and a TEXT of the same bytes differ
			}
			rows.Close()
		}
	default:
		var lines []string
		err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if strings.HasSuffix(p, ".sessfix.lock") {
				return nil
			}
			rel, _ := filepath.Rel(path, p)
			fi, err := os.Lstat(p)
			if err != nil {
				return err
			}
			if d.IsDir() {
				lines = append(lines, rel+"/ "+fi.Mode().String())
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			lines = append(lines, fmt.Sprintf("%s %x %v", rel, sha256.Sum256(data), fi.Mode()))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(lines)
		b.WriteString(strings.Join(lines, "\n"))
	}
	return b.String()
}
