package salvage

import (
	"context"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/internal/sqlitedb"
)

// Activity says whether another program has the database at path open or
// locked (store.Activity), from the locks and open files the system lists,
// without opening it: a caller about to salvage, reindex or checkpoint
// refuses unless it is store.ActivityNone.
func Activity(path string) store.Activity { return sqlitedb.Activity(path) }

// IndexOnly reports whether every name in affected is an index created by
// CREATE INDEX in the database at path (read immutable), so that Reindex
// can repair the damage; false when affected is empty or the schema
// cannot be read.
func IndexOnly(ctx context.Context, path string, affected []string) bool {
	if len(affected) == 0 {
		return false
	}
	in, _, err := openSource(path)
	if err != nil {
		return false
	}
	defer in.Close()
	names, err := sqlitedb.Names(ctx, in.SQL, `SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL`)
	if err != nil {
		return false
	}
	for _, a := range affected {
		if !names[a] {
			return false
		}
	}
	return true
}
