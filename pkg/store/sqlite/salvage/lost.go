package salvage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

func isConstraint(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_CONSTRAINT
}

// lostIDs fills in the lost ranges of t what the table's indexes still
// hold about them: how many rows, and their id, session_id and
// message_id. An index that cannot be read is passed over; a range no
// index could be read for keeps Rows -1.
func lostIDs(ctx context.Context, in, out *sql.DB, schema []entry, t *TableReport) {
	for _, e := range schema {
		if e.typ != "index" || e.table != t.Name {
			continue
		}
		cols, err := indexColumns(ctx, in, e.name)
		if err != nil || len(cols) == 0 {
			continue
		}
		for i := range t.Lost {
			indexRange(ctx, in, out, t.Name, e.name, cols, &t.Lost[i])
		}
	}
	for i := range t.Lost {
		r := &t.Lost[i]
		r.IDs, r.SessionIDs, r.MessageIDs = sortedUnique(r.IDs), sortedUnique(r.SessionIDs), sortedUnique(r.MessageIDs)
	}
}

// indexColumns are the named columns of an index (none when one of them
// is an expression).
func indexColumns(ctx context.Context, db *sql.DB, index string) ([]string, error) {
	rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_index_info(?) ORDER BY seqno", index)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var name sql.NullString
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		if !name.Valid {
			return nil, nil
		}
		cols = append(cols, name.String)
	}
	return cols, rows.Err()
}

// indexRange reads the entries of index whose rowid is in r: a covering
// scan of the index that never reads the table's pages. The ids of rows
// out has after all (found in the raw pages) are left out.
func indexRange(ctx context.Context, in, out *sql.DB, table, index string, cols []string, r *Range) {
	sel := make([]string, len(cols))
	for i, c := range cols {
		sel[i] = quote(c)
	}
	q := fmt.Sprintf("SELECT rowid, %s FROM %s INDEXED BY %s WHERE rowid BETWEEN ? AND ?",
		strings.Join(sel, ", "), quote(table), quote(index))
	rows, err := in.QueryContext(ctx, q, r.From, r.To)
	if err != nil {
		return
	}
	defer rows.Close()
	vals := make([]any, len(cols)+1)
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var ids, sessions, messages []string
	n := 0
	for rows.Next() {
		if rows.Scan(ptrs...) != nil {
			return
		}
		n++
		var there int
		if out.QueryRowContext(ctx, "SELECT count(*) FROM "+quote(table)+" WHERE rowid = ?", vals[0]).Scan(&there) == nil && there > 0 {
			continue
		}
		for i, c := range cols {
			s, ok := vals[i+1].(string)
			if !ok {
				continue
			}
			switch {
			case c == "id" && table == "session", c == "session_id":
				sessions = append(sessions, s)
			case c == "id" && table == "message", c == "message_id":
				messages = append(messages, s)
			}
			if c == "id" {
				ids = append(ids, s)
			}
		}
	}
	if rows.Err() != nil {
		return
	}
	r.Rows = max(r.Rows, n)
	r.IDs = append(r.IDs, ids...)
	r.SessionIDs = append(r.SessionIDs, sessions...)
	r.MessageIDs = append(r.MessageIDs, messages...)
}

// findMissingSessions lists the session ids out's tables name (a
// session_id column) that have no session row, and gathers the sessions
// of every lost range into rep.LostSessions.
func findMissingSessions(ctx context.Context, out *sql.DB, rep *Report) error {
	var lost []string
	for _, t := range rep.Tables {
		for _, r := range t.Lost {
			lost = append(lost, r.SessionIDs...)
		}
	}
	var has int
	if err := out.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'session'").Scan(&has); err != nil {
		return fmt.Errorf("salvage: read the new schema: %w", err)
	}
	if has == 1 {
		rows, err := out.QueryContext(ctx, "SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c WHERE m.type = 'table' AND m.name != 'session' AND c.name = 'session_id' ORDER BY m.name")
		if err != nil {
			return fmt.Errorf("salvage: read the new schema: %w", err)
		}
		var tables []string
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				rows.Close()
				return err
			}
			tables = append(tables, name)
		}
		rows.Close()
		var missing []string
		for _, t := range tables {
			ids, err := strings1(ctx, out, "SELECT DISTINCT session_id FROM "+quote(t)+" WHERE session_id NOT IN (SELECT id FROM session)")
			if err != nil {
				return fmt.Errorf("salvage: sessions of %s: %w", t, err)
			}
			missing = append(missing, ids...)
		}
		rep.MissingSessions = sortedUnique(missing)
		lost = append(lost, rep.MissingSessions...)
	}
	rep.LostSessions = sortedUnique(lost)
	return nil
}

// strings1 is the first column of a query's rows, as text.
func strings1(ctx context.Context, db *sql.DB, q string, args ...any) ([]string, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s sql.NullString
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		if s.Valid {
			out = append(out, s.String)
		}
	}
	return out, rows.Err()
}
