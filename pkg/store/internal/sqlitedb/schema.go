package sqlitedb

import (
	"context"
	"database/sql"

	"github.com/sessfix/sessfix/pkg/store"
)

// v1Columns are the 1.x tables and the columns sessfix reads and writes in
// them.
var v1Columns = []struct {
	table   string
	columns []string
}{
	{"session", []string{"id", "title", "time_updated"}},
	{"message", []string{"id", "session_id", "time_created", "time_updated", "data"}},
	{"part", []string{"id", "message_id", "session_id", "time_created", "time_updated", "data"}},
}

// Tables returns the names of the database's tables.
func Tables(ctx context.Context, db *sql.DB, path string) (map[string]bool, error) {
	tables, err := Names(ctx, db, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return nil, Error(path, "read the schema of", err)
	}
	return tables, nil
}

// CheckV1 checks that the database holds OpenCode's 1.x tables with the
// columns sessfix uses (tables is what Tables returned); an error wraps
// store.ErrNotFound.
func CheckV1(ctx context.Context, db *sql.DB, path string, tables map[string]bool) error {
	for _, t := range v1Columns {
		if !tables[t.table] {
			return store.NotFoundf("%s is an sqlite database without opencode's %q table", path, t.table)
		}
		cols, err := Names(ctx, db, `SELECT name FROM pragma_table_info(?)`, t.table)
		if err != nil {
			return Error(path, "read the schema of", err)
		}
		for _, c := range t.columns {
			if !cols[c] {
				return store.NotFoundf("%s: table %q has no column %q, so it is not an opencode 1.x database", path, t.table, c)
			}
		}
	}
	return nil
}

// HasTable reports whether the SQLite file at path has the table. A file
// that cannot be read as a database has none.
func HasTable(path, table string) bool {
	if !IsSQLiteFile(path) {
		return false
	}
	found := false
	d, err := Open(path, func(ctx context.Context, db *sql.DB, path string) error {
		tables, err := Tables(ctx, db, path)
		found = tables[table]
		return err
	})
	if err == nil {
		d.Close()
	}
	return found
}

// Names runs a query whose rows are one name each.
func Names(ctx context.Context, db *sql.DB, query string, args ...any) (map[string]bool, error) {
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
