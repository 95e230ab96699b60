package watch

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"modernc.org/sqlite" // and the database/sql driver "sqlite"
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
	sums map[string]sum   // per session, by the last content check
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

// contentKey is the pending entry of a database's content check.
const contentKey = "\x00content"

// contentEvery is the least time between two content checks of a
// database: each reads the whole database, so while OpenCode works (with
// pauses longer than the settle window between its writes) the checks
// are spread out; OpenCode's own writes are followed by time_updated
// meanwhile.
const contentEvery = time.Minute

// digestFunc is the SQL function that sums a row for the content check:
// FNV-1a (32 bits, so that sums of millions of rows stay far from int64
// overflow) over every argument.
const digestFunc = "sessfix_watch_digest"

func init() {
	sqlite.MustRegisterDeterministicScalarFunction(digestFunc, -1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		h := fnv.New32a()
		for _, a := range args {
			switch v := a.(type) {
			case string:
				h.Write([]byte(v))
			case []byte:
				h.Write(v)
			case nil:
			default:
				fmt.Fprint(h, v)
			}
			h.Write([]byte{0})
		}
		return int64(h.Sum32()), nil
	})
}

// sum is what the content check knows of a session: how many rows it has
// and the sum of their digests.
type sum struct{ rows, digest int64 }

// digestQuery sums the rows of every session: of a session row every
// column but time_updated (its model, directory and project, which SF212
// and SF213 read, as well as its title; the columns differ between
// OpenCode versions, hence the list), of message and part rows the id and
// data.
func digestQuery(sessionColumns []string) string {
	cols := make([]string, len(sessionColumns))
	for i, c := range sessionColumns {
		cols[i] = `"` + strings.ReplaceAll(c, `"`, `""`) + `"`
	}
	return `SELECT sid, SUM(n), SUM(d) FROM (
	SELECT id AS sid, 1 AS n, ` + digestFunc + `(` + strings.Join(cols, ", ") + `) AS d FROM session
	UNION ALL SELECT session_id, 1, ` + digestFunc + `(id, data) FROM message
	UNION ALL SELECT session_id, 1, ` + digestFunc + `(id, data) FROM part
) GROUP BY sid`
}

// sessionColumns are the session table's columns but time_updated, in
// table order.
func (c *changes) sessionColumns(ctx context.Context) ([]string, error) {
	rows, err := c.db.QueryContext(ctx, `SELECT name FROM pragma_table_info('session') WHERE name <> 'time_updated' ORDER BY cid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		out = append(out, name)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("the database has no session table")
	}
	return out, nil
}

// digest reads the content of every session (a checksum of each row,
// digestQuery, summed per session, computed inside SQLite) and returns the
// sessions whose content differs from the previous call's: rows edited
// without a newer time_updated, rows deleted, a database copied in place
// over the file. The first call only records where the database stands.
// The session table's columns are read each time: a database OpenCode
// migrated meanwhile has others (every session then differs once).
func (c *changes) digest(ctx context.Context, first bool) ([]string, error) {
	cols, err := c.sessionColumns(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := c.db.QueryContext(ctx, digestQuery(cols))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cur := map[string]sum{}
	for rows.Next() {
		var sid sql.NullString
		var s sum
		if err := rows.Scan(&sid, &s.rows, &s.digest); err != nil {
			return nil, err
		}
		if sid.Valid {
			cur[sid.String] = s
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []string
	if !first {
		for id, s := range cur {
			if old, ok := c.sums[id]; !ok || old != s {
				out = append(out, id)
			}
		}
		for id := range c.sums {
			if _, ok := cur[id]; !ok {
				out = append(out, id)
			}
		}
		sort.Strings(out)
	}
	c.sums = cur
	return out, nil
}
