package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/internal/sqlitedb"
)

// Session rows. OpenCode's session table has real columns (project_id,
// directory, title, model, ...), not one data column; the reader hands a
// session over as a JSON object of the row's columns in column order
// (sqlitedb.SessionBody), and the writer maps such a body back onto the
// columns:
//   - OpUpdate writes only the columns whose value the new body changes, and
//     refuses a body that drops a column, names a field that has no column,
//     changes the id, or gives a column a JSON object, array or boolean (a
//     JSON column such as model is a string in the body, as it is stored).
//   - OpAdd inserts a row with the body's columns; Edit.Created, when set,
//     is its time_created. Columns the body leaves out get their default.
//   - OpDelete removes the row only when the change set also deletes every
//     message of the session (and so its parts, which the backup covers),
//     and nothing else refers to it: no row of a table with a foreign key
//     to the session (todo, session_share, session_message: the cascade
//     would take them unbacked-up), no child session, no part filed under
//     the session whose message is elsewhere.
//   - Re-keying or quarantining a session row is refused.
//
// A session row's image holds that body as its Data (what its hash covers)
// and every column but id in Columns; Restore writes the columns.

// sessionColumn is one column of the session table.
type sessionColumn struct {
	name    string
	typ     string // the declared type
	notNull bool
	dflt    sql.NullString // the default's SQL text
	pk      bool
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// sessionColumns reads the session table's columns, in order.
func sessionColumns(ctx context.Context, q querier) ([]sessionColumn, error) {
	rows, err := q.QueryContext(ctx, `SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info('session') ORDER BY cid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []sessionColumn
	for rows.Next() {
		var c sessionColumn
		var pk int
		if err := rows.Scan(&c.name, &c.typ, &c.notNull, &c.dflt, &pk); err != nil {
			return nil, err
		}
		c.pk = pk > 0
		out = append(out, c)
	}
	return out, rows.Err()
}

// sessionEditError names a session edit in a refusal.
func sessionEditError(e *store.Edit, format string, args ...any) error {
	return fmt.Errorf("%s session %s: %s; nothing was written", e.Op, e.ID, fmt.Sprintf(format, args...))
}

// checkSessionOps refuses the session edits the writer never applies,
// before anything is read.
func checkSessionOps(cs *store.ChangeSet) error {
	if cs == nil {
		return nil
	}
	for i := range cs.Edits {
		e := &cs.Edits[i]
		if e.Kind != store.KindSession {
			continue
		}
		switch e.Op {
		case store.OpRekey:
			return sessionEditError(e, "sessfix does not re-key session rows (messages, parts and other tables name the id)")
		case store.OpQuarantine:
			return sessionEditError(e, "sessfix does not quarantine session rows (a row's columns are always readable)")
		}
	}
	return nil
}

// textual and numeric report the affinity SQLite gives a declared type
// (https://sqlite.org/datatype3.html, 3.1): a text column stores a number
// as text, a numeric one a numeric string as a number, so the writer
// accepts only values a column stores as given.
func (c sessionColumn) textual() bool {
	t := strings.ToUpper(c.typ)
	return !strings.Contains(t, "INT") && (strings.Contains(t, "CHAR") || strings.Contains(t, "CLOB") || strings.Contains(t, "TEXT"))
}

func (c sessionColumn) numeric() bool {
	t := strings.ToUpper(c.typ)
	return !c.textual() && t != "" && !strings.Contains(t, "BLOB")
}

// jsonToSQL is the value column c gets for its field of a body.
func jsonToSQL(c sessionColumn, v gjson.Result) (any, error) {
	field := c.name
	switch {
	case v.Type == gjson.String && c.numeric():
		return nil, fmt.Errorf("field %q holds a string, and its column is a number (%s)", field, c.typ)
	case v.Type == gjson.Number && c.textual():
		return nil, fmt.Errorf("field %q holds a number, and its column is text (give it as a string)", field)
	}
	switch v.Type {
	case gjson.Null:
		return nil, nil
	case gjson.String:
		return v.Str, nil
	case gjson.Number:
		if !strings.ContainsAny(v.Raw, ".eE") {
			if n, err := strconv.ParseInt(v.Raw, 10, 64); err == nil {
				return n, nil
			}
		}
		f, err := strconv.ParseFloat(v.Raw, 64)
		if err != nil {
			return nil, fmt.Errorf("field %q: %s is not a number SQLite stores", field, v.Raw)
		}
		return f, nil
	}
	return nil, fmt.Errorf("field %q holds %s: a session column holds text, a number or null (a JSON column such as model is given as a string, as it is stored)", field, v.Raw)
}

// bodyFields parses a session body into its fields in order, refusing a
// body that is not one JSON object or repeats a field.
func bodyFields(body []byte) ([]string, map[string]gjson.Result, error) {
	v := gjson.ParseBytes(body)
	if !v.IsObject() {
		return nil, nil, errors.New("the body is not a JSON object")
	}
	var names []string
	fields := map[string]gjson.Result{}
	var err error
	v.ForEach(func(k, val gjson.Result) bool {
		if _, dup := fields[k.Str]; dup {
			err = fmt.Errorf("the body has field %q twice", k.Str)
			return false
		}
		names = append(names, k.Str)
		fields[k.Str] = val
		return true
	})
	return names, fields, err
}

// sessionChange is one column an edit writes.
type sessionChange struct {
	column string
	value  any
}

// updateChanges maps an OpUpdate of a session body onto the columns whose
// value it changes.
func updateChanges(e *store.Edit, cols []sessionColumn) ([]sessionChange, error) {
	known := map[string]sessionColumn{}
	for _, c := range cols {
		known[c.name] = c
	}
	_, before, err := bodyFields(e.Before)
	if err != nil {
		return nil, sessionEditError(e, "the current body: %v", err)
	}
	names, after, err := bodyFields(e.After)
	if err != nil {
		return nil, sessionEditError(e, "the new body: %v", err)
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			return nil, sessionEditError(e, "the new body drops field %q (every column stays; give null to clear one)", name)
		}
	}
	var out []sessionChange
	for _, name := range names {
		v := after[name]
		col, ok := known[name]
		if !ok {
			return nil, sessionEditError(e, "field %q has no column in the session table, so it cannot be stored", name)
		}
		if old, ok := before[name]; ok && old.Raw == v.Raw {
			continue
		}
		if name == "id" {
			return nil, sessionEditError(e, "a session's id cannot change")
		}
		val, err := jsonToSQL(col, v)
		if err != nil {
			return nil, sessionEditError(e, "%v", err)
		}
		out = append(out, sessionChange{name, val})
	}
	return out, nil
}

// addValues maps an OpAdd's body onto the session table's columns: the
// value of every column, in table order, as Apply inserts it (a column the
// body leaves out gets its default, NULL without one).
func addValues(e *store.Edit, cols []sessionColumn) ([]sessionChange, error) {
	_, fields, err := bodyFields(e.After)
	if err != nil {
		return nil, sessionEditError(e, "the new body: %v", err)
	}
	known := map[string]bool{}
	for _, c := range cols {
		known[c.name] = true
	}
	for name := range fields {
		if !known[name] {
			return nil, sessionEditError(e, "field %q has no column in the session table, so it cannot be stored", name)
		}
	}
	if v, ok := fields["id"]; ok && (v.Type != gjson.String || v.Str != e.ID) {
		return nil, sessionEditError(e, "the body's id %s is not the edit's", v.Raw)
	}
	var out []sessionChange
	for _, c := range cols {
		var val any
		v, given := fields[c.name]
		switch {
		case c.name == "id":
			val = e.ID
		case c.name == "time_created" && e.Created != 0:
			val = e.Created
		case given:
			if val, err = jsonToSQL(c, v); err != nil {
				return nil, sessionEditError(e, "%v", err)
			}
		case c.dflt.Valid:
			if val, err = defaultValue(c); err != nil {
				return nil, sessionEditError(e, "%v", err)
			}
		}
		if val == nil && c.notNull {
			return nil, sessionEditError(e, "the body has no %s, which the session table requires", c.name)
		}
		out = append(out, sessionChange{c.name, val})
	}
	return out, nil
}

// defaultValue is the value of a column's default when it is a literal
// (what OpenCode's schema has: numbers, strings, NULL); an expression
// default is refused, as its value cannot be planned.
func defaultValue(c sessionColumn) (any, error) {
	d := strings.TrimSpace(c.dflt.String)
	if strings.EqualFold(d, "null") {
		return nil, nil
	}
	if len(d) >= 2 && d[0] == '\'' && d[len(d)-1] == '\'' {
		return strings.ReplaceAll(d[1:len(d)-1], "''", "'"), nil
	}
	if n, err := strconv.ParseInt(d, 10, 64); err == nil {
		return n, nil
	}
	if f, err := strconv.ParseFloat(d, 64); err == nil {
		return f, nil
	}
	return nil, fmt.Errorf("column %s has the default %s, which sessfix cannot plan; give it in the body", c.name, d)
}

// plannedSession makes im, the image of a session row (absent for an
// add), the row once changes are written: its columns with the changes'
// values (as SQLite stores them: the writer accepts only values a column
// stores as given), its body rendered as the reader renders it.
func plannedSession(im *store.Image, cols []sessionColumn, changes []sessionChange) {
	vals := map[string]any{"id": im.ID}
	for _, c := range im.Columns {
		vals[c.Name] = columnValue(c)
	}
	for _, c := range changes {
		vals[c.column] = c.value
	}
	var next []store.Column
	if rowid, ok := vals["rowid"]; ok {
		next = append(next, columnOf("rowid", rowid))
	}
	names := make([]string, len(cols))
	vs := make([]any, len(cols))
	for i, c := range cols {
		names[i], vs[i] = c.name, vals[c.name]
		if c.name != "id" {
			next = append(next, columnOf(c.name, vals[c.name]))
		}
	}
	im.Exists, im.Blob, im.Columns = true, false, next
	im.Data = sqlitedb.SessionBody(names, vs)
}

// sessionBlockers returns why session id's row cannot be removed: a
// message of the session the change set does not delete (deleting: the
// messages it deletes; nil once they are gone), rows of another table
// that refer to it, child sessions, or parts filed under it whose message
// belongs elsewhere. Nil when nothing does.
func sessionBlockers(ctx context.Context, q querier, id string, deleting map[string]bool) (why string, err error) {
	ids, err := names(ctx, q, `SELECT id FROM message WHERE session_id = ? ORDER BY id`, id)
	if err != nil {
		return "", err
	}
	for _, m := range ids {
		if !deleting[m] {
			return fmt.Sprintf("its message %s stays (sessfix removes a session row only with every message of it)", m), nil
		}
	}
	refs, err := q.QueryContext(ctx, `SELECT m.name, f."from" FROM sqlite_master m JOIN pragma_foreign_key_list(m.name) f
		WHERE m.type = 'table' AND f."table" = 'session' AND m.name NOT IN ('message', 'session') ORDER BY m.name`)
	if err != nil {
		return "", err
	}
	type ref struct{ table, column string }
	var rs []ref
	for refs.Next() {
		var r ref
		if err := refs.Scan(&r.table, &r.column); err != nil {
			refs.Close()
			return "", err
		}
		rs = append(rs, r)
	}
	err = refs.Err()
	refs.Close()
	if err != nil {
		return "", err
	}
	count := func(query string, args ...any) (int, error) {
		rows, err := q.QueryContext(ctx, query, args...)
		if err != nil {
			return 0, err
		}
		defer rows.Close()
		n := 0
		if rows.Next() {
			if err := rows.Scan(&n); err != nil {
				return 0, err
			}
		}
		return n, rows.Err()
	}
	for _, r := range rs {
		n, err := count(`SELECT count(*) FROM `+quoteIdent(r.table)+` WHERE `+quoteIdent(r.column)+` = ?`, id)
		if err != nil {
			return "", err
		}
		if n > 0 {
			return fmt.Sprintf("table %s has %d rows of it, which removing the row would delete with it", r.table, n), nil
		}
	}
	if n, err := count(`SELECT count(*) FROM session WHERE parent_id = ?`, id); err != nil && !strings.Contains(err.Error(), "no such column") {
		return "", err
	} else if n > 0 {
		return fmt.Sprintf("%d sessions name it as their parent", n), nil
	}
	n, err := count(`SELECT count(*) FROM part WHERE session_id = ? AND message_id NOT IN (SELECT id FROM message WHERE session_id = ?)`, id, id)
	if err != nil {
		return "", err
	}
	if n > 0 {
		return fmt.Sprintf("%d parts filed under it belong to messages of other sessions, or to none", n), nil
	}
	return "", nil
}

// names runs a query whose rows are one text value each, in order.
func names(ctx context.Context, q querier, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// deletedMessages are the messages cs deletes or quarantines.
func deletedMessages(cs *store.ChangeSet) map[string]bool {
	out := map[string]bool{}
	for _, e := range cs.Edits {
		if e.Kind == store.KindMessage && (e.Op == store.OpDelete || e.Op == store.OpQuarantine) {
			out[e.ID] = true
		}
	}
	return out
}

// projectExists reports whether project_id names a project row (true when
// the database has no project table to check against).
func projectExists(ctx context.Context, q querier, id any) (bool, error) {
	rows, err := q.QueryContext(ctx, `SELECT 1 FROM project WHERE id = ?`, id)
	if err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return true, nil
		}
		return false, err
	}
	defer rows.Close()
	found := rows.Next()
	return found, rows.Err()
}

// applySession applies one session edit inside tx (a delete is applied by
// deleteSession, after the change set's other edits).
func (w *sqliteWriter) applySession(ctx context.Context, tx *sql.Tx, e *store.Edit) (*store.Location, error) {
	fail := func(err error) error {
		return w.dbError(fmt.Sprintf("%s session %s in", e.Op, e.ID), err)
	}
	cols, err := sessionColumns(ctx, tx)
	if err != nil {
		return nil, fail(err)
	}
	t := store.Target{Kind: store.KindSession, ID: e.ID, Path: w.info.Path, Table: "session"}
	im, err := w.readImage(ctx, tx, t)
	if err != nil {
		return nil, err
	}
	var changes []sessionChange
	if e.Op == store.OpAdd {
		if im.Exists {
			return nil, fmt.Errorf("cannot add session %s to %s: a row with that id exists; nothing was written", e.ID, w.info.Path)
		}
		if changes, err = addValues(e, cols); err != nil {
			return nil, err
		}
	} else {
		if !im.Exists {
			return nil, store.Changed(t.String(), e.Kind, e.ID, "was deleted")
		}
		if string(im.Data) != string(e.Before) {
			return nil, store.Changed(t.String(), e.Kind, e.ID, "was modified")
		}
		if changes, err = updateChanges(e, cols); err != nil {
			return nil, err
		}
	}
	for _, c := range changes {
		if c.column != "project_id" || c.value == nil {
			continue
		}
		if ok, err := projectExists(ctx, tx, c.value); err != nil {
			return nil, fail(err)
		} else if !ok {
			return nil, sessionEditError(e, "project %v has no project row", c.value)
		}
	}
	loc := store.Location{Path: w.info.Path, Table: "session", RowID: rowidOf(im)}
	if len(changes) == 0 {
		return &loc, nil
	}
	quoted := make([]string, len(changes))
	args := make([]any, len(changes))
	for i, c := range changes {
		quoted[i], args[i] = quoteIdent(c.column), c.value
	}
	var res sql.Result
	if e.Op == store.OpAdd {
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(changes)), ", ")
		res, err = tx.ExecContext(ctx, `INSERT INTO session (`+strings.Join(quoted, ", ")+`) VALUES (`+marks+`)`, args...)
	} else {
		res, err = tx.ExecContext(ctx, `UPDATE session SET `+strings.Join(quoted, " = ?, ")+` = ? WHERE id = ?`, append(args, e.ID)...)
	}
	if err != nil {
		return nil, fail(err)
	}
	if e.Op == store.OpAdd {
		loc.RowID, _ = res.LastInsertId()
	}
	return &loc, nil
}

// deleteSession removes a session row inside tx, once the change set's
// other edits have removed its messages, when nothing else refers to it.
func (w *sqliteWriter) deleteSession(ctx context.Context, tx *sql.Tx, e *store.Edit) (*store.Location, error) {
	t := store.Target{Kind: store.KindSession, ID: e.ID, Path: w.info.Path, Table: "session"}
	im, err := w.readImage(ctx, tx, t)
	if err != nil {
		return nil, err
	}
	if !im.Exists {
		return nil, store.Changed(t.String(), e.Kind, e.ID, "was deleted")
	}
	if string(im.Data) != string(e.Before) {
		return nil, store.Changed(t.String(), e.Kind, e.ID, "was modified")
	}
	if why, err := sessionBlockers(ctx, tx, e.ID, nil); err != nil {
		return nil, w.dbError("delete session "+e.ID+" in", err)
	} else if why != "" {
		return nil, fmt.Errorf("cannot delete session %s from %s: %s; nothing was written", e.ID, w.info.Path, why)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM session WHERE id = ?`, e.ID); err != nil {
		return nil, w.dbError("delete session "+e.ID+" in", err)
	}
	return &store.Location{Path: w.info.Path, Table: "session", RowID: rowidOf(im)}, nil
}

// rowidOf is the rowid an image of a row keeps among its columns.
func rowidOf(im store.Image) int64 {
	for _, c := range im.Columns {
		if c.Name == "rowid" && c.Int != nil {
			return *c.Int
		}
	}
	return 0
}
