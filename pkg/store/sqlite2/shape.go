package sqlite2

import (
	"strings"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/internal/sqlitedb"
)

// Shape is OpenCode 2's database as an entry of the shapes registry
// (pkg/store/shapes). It comes before pkg/store/sqlite's: a database with
// a session_v2 table is this shape's.
type Shape struct{}

func (Shape) Name() store.Shape { return store.ShapeSQLite2 }
func (Shape) Expect() string    { return "an OpenCode 2 opencode.db" }

func (Shape) Open(path string) (store.Store, error) {
	st, err := open(path)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// OpenWriter refuses: sessfix never writes an OpenCode 2 database.
func (Shape) OpenWriter(info store.Info, _ store.WriteOptions) (store.Writer, error) {
	return nil, Refusal(info.Path)
}

// ReadOnly is the error every write to the store gets (Refusal): the
// shapes registry asks it before a command plans a repair.
func (Shape) ReadOnly(info store.Info) error { return Refusal(info.Path) }

// Refusal is why sessfix does not write the OpenCode 2 database at path.
func Refusal(path string) error { return store.OpenCode2Refusal(path) }

// Match reports whether the file is an SQLite database with a session_v2
// table. Other SQLite files are pkg/store/sqlite's to judge.
func (Shape) Match(path string) (bool, string, error) {
	if !sqlitedb.IsSQLiteFile(path) {
		return false, "", nil
	}
	if sqlitedb.HasTable(path, "session_v2") {
		return true, "", nil
	}
	return false, "not an OpenCode 2 database", nil
}

// Candidate reports whether a file in a fixture tree is a database.
func (Shape) Candidate(path string) bool { return sqlitedb.IsSQLiteFile(path) }

// InDataDir returns the data dir's OpenCode 2 databases: those of the
// databases OpenCode reads there (sqlitedb.InDataDir) that have a
// session_v2 table.
func (Shape) InDataDir(dir, db string) (found, looked []string) {
	all, looked := sqlitedb.InDataDir(dir, db)
	for _, p := range all {
		if sqlitedb.HasTable(p, "session_v2") {
			found = append(found, p)
		}
	}
	return found, looked
}

// Superseded is the note for OpenCode 2 databases next to the stores of a
// shape registered before this one; none is today.
func (Shape) Superseded(dir string, found []string) string {
	return strings.Join(found, ", ") + ": OpenCode 2 databases next to the stores read in " + dir + "; not scanned: name one explicitly to scan it"
}
