package sqlite

import (
	"context"
	"database/sql"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/internal/sqlitedb"
)

// checkSchema detects OpenCode's v1 tables by content, for the reader and
// the writer alike. A database with OpenCode 2's session_v2 table wraps
// ErrUnsupported: it is pkg/store/sqlite2's, and its v1 message and part
// rows are frozen history sessfix never writes. A database without the v1
// tables and columns wraps ErrNotFound.
func checkSchema(ctx context.Context, db *sql.DB, path string) error {
	tables, err := sqlitedb.Tables(ctx, db, path)
	if err != nil {
		return err
	}
	if tables["session_v2"] {
		return store.OpenCode2Refusal(path)
	}
	return sqlitedb.CheckV1(ctx, db, path, tables)
}

// dbError names the database in a driver error and classifies it (see
// sqlitedb.Error).
func dbError(path, doing string, err error) error { return sqlitedb.Error(path, doing, err) }
