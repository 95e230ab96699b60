package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sessfix/sessfix/pkg/store"
)

// v1Columns are the v1 tables and the columns sessfix reads and writes in
// them.
var v1Columns = []struct {
	table   string
	columns []string
}{
	{"session", []string{"id", "title", "time_updated"}},
	{"message", []string{"id", "session_id", "time_created", "time_updated", "data"}},
	{"part", []string{"id", "message_id", "session_id", "time_created", "time_updated", "data"}},
}

// checkSchema detects OpenCode's v1 tables by content, for the reader and
// the writer alike. A database with OpenCode 2.x's session_v2 table wraps
// ErrUnsupported: its v1 message and part rows are frozen history, which
// sessfix neither reads as the current sessions nor writes. A database
// without the v1 tables and columns wraps ErrNotFound.
func checkSchema(ctx context.Context, db *sql.DB, path string) error {
	tables, err := names(ctx, db, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return dbError(path, "read the schema of", err)
	}
	if tables["session_v2"] {
		return store.Unsupportedf("%s: OpenCode 2.x database: not supported yet (its session_v2 tables make the v1 message and part rows frozen history)", path)
	}
	for _, t := range v1Columns {
		if !tables[t.table] {
			return store.NotFoundf("%s is an sqlite database without opencode's %q table", path, t.table)
		}
		cols, err := names(ctx, db, `SELECT name FROM pragma_table_info(?)`, t.table)
		if err != nil {
			return dbError(path, "read the schema of", err)
		}
		for _, c := range t.columns {
			if !cols[c] {
				return store.NotFoundf("%s: table %q has no column %q, so it is not an opencode 1.x database", path, t.table, c)
			}
		}
	}
	return nil
}

// names runs a query whose rows are one name each.
func names(ctx context.Context, db *sql.DB, query string, args ...any) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		out[name] = true
	}
	return out, rows.Err()
}

// dbError names the database in a driver error and classifies it, for
// reads and writes alike (doing says which: "read", "write", "commit the
// repair to"). A lock another program held past the busy timeout is a
// *store.BusyError; a file that is not a database wraps ErrNotFound; a
// corrupt one says how to see the damage; a full disk, a read-only
// database or a refused permission carries the system error, so the
// command can say what to do.
func dbError(path, doing string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return fmt.Errorf("cannot %s %s: %w", doing, path, err)
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return &store.BusyError{Path: path, Doing: doing, Err: err}
	case sqlite3.SQLITE_NOTADB:
		return store.NotFoundf("%s is not an sqlite database", path)
	case sqlite3.SQLITE_CORRUPT:
		return fmt.Errorf("%s is corrupt (%v); run `sqlite3 %s \"PRAGMA integrity_check\"` to see the damage", path, err, path)
	}
	if sys := sqliteSysErr(se.Code()); sys != nil {
		// SQLite reports its own codes; the command's hints know the system's.
		return fmt.Errorf("cannot %s %s: %w (%w)", doing, path, err, sys)
	}
	return fmt.Errorf("cannot %s %s: %w", doing, path, err)
}

// sqliteSysErr is the system error a SQLite result code stands for, when
// the user can act on it: a full disk, a read-only database or
// filesystem, a permission refused. Nil otherwise.
func sqliteSysErr(code int) error {
	switch code & 0xff {
	case sqlite3.SQLITE_FULL:
		return syscall.ENOSPC
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_AUTH:
		return fs.ErrPermission
	}
	return nil
}
