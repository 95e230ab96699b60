package sqlite

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/internal/sqlitedb"
)

// Shape is OpenCode's SQLite database (1.2 and later) as an entry of the
// shapes registry (pkg/store/shapes).
type Shape struct{}

func (Shape) Name() store.Shape { return store.ShapeSQLite }
func (Shape) Expect() string    { return "an opencode.db file" }

// Open opens the database. One whose schema or header is so damaged that
// SQL cannot open it (SQLite's "database disk image is malformed", "file
// is not a database") but that starts with SQLite's header and holds at
// least one page of the smallest size (512 bytes: a shorter file never was
// a database), or whose header is gone but whose pages are laid out as a
// database's (sqlitedb.Headerless), is opened as a damaged store: no
// session, the damage in its Health (SF501).
func (Shape) Open(path string) (store.Store, error) {
	st, err := openSQLite(path)
	if err != nil {
		if sqlitedb.Headerless(path) {
			return sqlitedb.NewDamaged(store.Info{Shape: store.ShapeSQLite, Path: filepath.Clean(path)}, headerGone), nil
		}
		if why, ok := sqlitedb.Corrupt(err); ok && sqlitedb.IsSQLiteFile(path) && fileSize(path) >= 512 {
			// Named as the user named it, as a database that opens is.
			return sqlitedb.NewDamaged(store.Info{Shape: store.ShapeSQLite, Path: filepath.Clean(path)}, why), nil
		}
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

// headerGone is the damage of a database whose header is gone
// (sqlitedb.Headerless).
const headerGone = "its 100-byte header is gone (the file does not start with \"SQLite format 3\"), but its pages are there"

// Match reports whether the file starts with SQLite's header, or is laid
// out as a database whose header is gone (sqlitedb.Headerless: opened as
// a damaged store). An OpenCode 2 database is pkg/store/sqlite2's, which
// the registry asks first.
func (Shape) Match(path string) (bool, string, error) {
	if sqlitedb.IsSQLiteFile(path) || sqlitedb.Headerless(path) {
		return true, "", nil
	}
	return false, "not an sqlite database", nil
}

// Candidate reports whether a file in a fixture tree is a database.
func (Shape) Candidate(path string) bool { return sqlitedb.IsSQLiteFile(path) }

// InDataDir returns the data dir's databases: $OPENCODE_DB when db is set
// (absolute, or relative to the data dir), else opencode.db and the
// channels' opencode-*.db.
func (Shape) InDataDir(dir, db string) (found, looked []string) { return sqlitedb.InDataDir(dir, db) }

// Superseded is the note for the 1.x databases next to an OpenCode 2
// database (pkg/store/sqlite2, registered before this shape) in a data
// dir: the data dir is read as OpenCode 2 reads it.
func (Shape) Superseded(dir string, found []string) string {
	return strings.Join(found, ", ") + ": OpenCode 1.x databases next to the OpenCode 2 database in " + dir + "; not scanned: name one explicitly to scan it"
}

// fileSize is the size of the file at path, 0 when it cannot be seen.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}
