package sqlite

import (
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/internal/sqlitedb"
)

// openSQLite opens an OpenCode 1.2+ database read-only and checks it holds
// the v1 tables (checkSchema: a database with OpenCode 2's session_v2
// table returns an error wrapping store.ErrUnsupported, one that is not
// OpenCode's an error wrapping store.ErrNotFound). A database locked by an
// exclusive writer is an error wrapping store.ErrLocked once the busy
// timeout has passed. A read-only directory is read as immutable, or from
// a private snapshot copy (sqlitedb.Open); a note in Info says so.
func openSQLite(path string) (*sqlitedb.V1, error) {
	d, err := sqlitedb.Open(path, checkSchema)
	if err != nil {
		return nil, err
	}
	return sqlitedb.NewV1(d, store.Info{Shape: store.ShapeSQLite, Path: d.Path}), nil
}
