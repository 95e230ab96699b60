package sqlite

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sessfix/sessfix/pkg/store"
)

// Shape is OpenCode's SQLite database (1.2 and later) as an entry of the
// shapes registry (pkg/store/shapes).
type Shape struct{}

func (Shape) Name() store.Shape { return store.ShapeSQLite }
func (Shape) Expect() string    { return "an opencode.db file" }

func (Shape) Open(path string) (store.Store, error) {
	st, err := openSQLite(path)
	if err != nil {
		return nil, err
	}
	return st, nil
}

func (Shape) OpenWriter(info store.Info, opts store.WriteOptions) (store.Writer, error) {
	w, err := openSQLiteWriter(info, opts)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// Match reports whether the file starts with SQLite's header.
func (Shape) Match(path string) (bool, string, error) {
	if isSQLiteFile(path) {
		return true, "", nil
	}
	return false, "not an sqlite database", nil
}

// Candidate reports whether a file in a fixture tree is a database.
func (Shape) Candidate(path string) bool { return isSQLiteFile(path) }

// InDataDir returns the data dir's databases: $OPENCODE_DB when db is set
// (absolute, or relative to the data dir), else opencode.db and the
// channels' opencode-*.db.
func (Shape) InDataDir(dir, db string) (found, looked []string) {
	if db != "" {
		if !filepath.IsAbs(db) {
			db = filepath.Join(dir, db)
		}
		if isFile(db) {
			found = []string{db}
		}
		return found, []string{db + " (from $OPENCODE_DB)"}
	}
	main := filepath.Join(dir, "opencode.db")
	if isFile(main) {
		found = append(found, main)
	}
	more, _ := filepath.Glob(filepath.Join(globEscape(dir), "opencode-*.db"))
	sort.Strings(more)
	for _, m := range more {
		if isFile(m) {
			found = append(found, m)
		}
	}
	return found, []string{main, filepath.Join(dir, "opencode-*.db")}
}

// Superseded is the note for databases a shape registered before this one
// found newer stores next to; none is today.
func (Shape) Superseded(dir string, found []string) string {
	return strings.Join(found, ", ") + ": OpenCode 1.x databases that a newer store in " + dir + " supersedes; not scanned: name one explicitly to scan it"
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// globEscape escapes glob metacharacters in a literal path.
func globEscape(p string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`)
	if filepath.Separator == '\\' {
		r = strings.NewReplacer(`*`, `[*]`, `?`, `[?]`, `[`, `[[]`)
	}
	return r.Replace(p)
}
