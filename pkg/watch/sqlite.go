package watch

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // database/sql driver "sqlite"
)

// sqliteSlackMS is how far before the newest time_updated seen a change
// query looks again: a transaction that commits late may carry older
// timestamps than one already seen.
const sqliteSlackMS = 60_000

// changes finds the sessions of a database touched since the last pass:
// rows of session, message and part whose time_updated is newer than the
// newest one the previous pass saw (minus a slack), grouped by session.
// Sessions whose newest time_updated is not newer than what was already
// seen for them are left out.
type changes struct {
	db   *sql.DB
	mark int64            // newest time_updated seen
	seen map[string]int64 // per session
}

func openChanges(path string) (*changes, error) {
	p := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(path))
	db, err := sql.Open("sqlite", "file:"+p+"?mode=ro&_pragma=busy_timeout(5000)&_pragma=query_only(1)")
	if err != nil {
		return nil, fmt.Errorf("cannot open %s to follow its changes: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	return &changes{db: db, seen: map[string]int64{}}, nil
}

func (c *changes) Close() error { return c.db.Close() }

const changedQuery = `SELECT sid, MAX(t) FROM (
	SELECT id AS sid, time_updated AS t FROM session WHERE time_updated > ?1
	UNION ALL SELECT session_id, time_updated FROM message WHERE time_updated > ?1
	UNION ALL SELECT session_id, time_updated FROM part WHERE time_updated > ?1
) GROUP BY sid`

// since returns the sessions changed since the last call. The first call
// only records where the database stands and returns nothing: the initial
// full scan covers what came before.
func (c *changes) since(ctx context.Context, first bool) ([]string, error) {
	from := c.mark - sqliteSlackMS
	if first {
		from = -1 << 62
	}
	rows, err := c.db.QueryContext(ctx, changedQuery, from)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var sid sql.NullString
		var t sql.NullInt64
		if err := rows.Scan(&sid, &t); err != nil {
			return nil, err
		}
		if !sid.Valid || !t.Valid {
			continue
		}
		if t.Int64 > c.mark {
			c.mark = t.Int64
		}
		if old, ok := c.seen[sid.String]; ok && t.Int64 <= old {
			continue
		}
		c.seen[sid.String] = t.Int64
		if !first {
			out = append(out, sid.String)
		}
	}
	return out, rows.Err()
}
