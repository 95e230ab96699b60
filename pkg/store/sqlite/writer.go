package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sessfix/sessfix/internal/faultpoint"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/internal/sqlitedb"
)

// DefaultBusyTimeout is how long a SQLite write waits for the database, the
// same as OpenCode's own busy_timeout.
const DefaultBusyTimeout = sqlitedb.DefaultBusyTimeout

// sqliteWriter writes OpenCode's v1 session, message and part rows, one
// transaction per change set (BEGIN IMMEDIATE, foreign keys on). Session
// rows are mapped from and to their columns (session.go).
//
// The After body of an edit is written to the data column as it is: the
// planner hands over compact JSON without id/sessionID/messageID, which live
// in the columns (OpenCode's own row format).
type sqliteWriter struct {
	info store.Info
	db   *sql.DB
	opts store.WriteOptions
	seen store.Listing
}

func openSQLiteWriter(info store.Info, opts store.WriteOptions) (*sqliteWriter, error) {
	// Targets name the database absolutely: the backup records them, and
	// undo may run from another directory.
	if abs, err := filepath.Abs(info.Path); err == nil {
		info.Path = abs
	}
	fi, err := os.Stat(info.Path)
	if err != nil {
		return nil, fmt.Errorf("cannot open %s for writing: %w", info.Path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("cannot open %s for writing: not a database file", info.Path)
	}
	busy := opts.BusyTimeout
	if busy <= 0 {
		busy = DefaultBusyTimeout
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(busy.Milliseconds(), 10)+")")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	q.Set("mode", "rw") // never create a database
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: info.Path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("cannot open %s for writing: %w", info.Path, err)
	}
	db.SetMaxOpenConns(1)
	w := &sqliteWriter{info: info, db: db, opts: opts}
	if err := checkSchema(context.Background(), db, info.Path); err != nil {
		db.Close()
		return nil, err
	}
	// Never write into a damaged database: the write could spread the damage.
	if err := sqlitedb.CheckIntegrity(context.Background(), db, info.Path); err != nil {
		db.Close()
		return nil, err
	}
	return w, nil
}

func (w *sqliteWriter) Close() error { return w.db.Close() }

// dbError names the database in a driver error and classifies it (see
// dbError); a failed write leaves the database as it was: SQLite rolls the
// transaction back.
func (w *sqliteWriter) dbError(doing string, err error) error {
	err = dbError(w.info.Path, doing, err)
	var busy *store.BusyError
	if errors.As(err, &busy) {
		return err
	}
	return store.WriteFailed(err, true)
}

func tableFor(k store.Kind) (string, error) {
	switch k {
	case store.KindMessage:
		return "message", nil
	case store.KindPart:
		return "part", nil
	case store.KindSession:
		return "session", nil
	}
	return "", fmt.Errorf("sessfix does not write %s rows", k)
}

// begin starts an IMMEDIATE transaction (the DSN's _txlock) with foreign
// keys checked at commit, so a message and its parts can be re-keyed.
func (w *sqliteWriter) begin(ctx context.Context, doing string) (*sql.Tx, error) {
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, w.dbError(doing, err)
	}
	if _, err := tx.ExecContext(ctx, `PRAGMA defer_foreign_keys = ON`); err != nil {
		tx.Rollback()
		return nil, w.dbError(doing, err)
	}
	return tx, nil
}

func (w *sqliteWriter) Apply(ctx context.Context, cs *store.ChangeSet) error {
	if err := cs.Check(); err != nil {
		return err
	}
	if err := checkSessionOps(cs); err != nil {
		return err
	}
	if cs.Empty() {
		return nil
	}
	tx, err := w.begin(ctx, "write")
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := w.checkCovered(ctx, tx, cs); err != nil {
		return err
	}
	now := w.opts.Clock().UnixMilli()
	locs := map[int]store.Location{}
	// A session row goes after the messages the change set deletes with it.
	for _, last := range []bool{false, true} {
		for i := range cs.Edits {
			e := &cs.Edits[i]
			sessionDelete := e.Kind == store.KindSession && e.Op == store.OpDelete
			if sessionDelete != last {
				continue
			}
			var loc *store.Location
			switch {
			case sessionDelete:
				loc, err = w.deleteSession(ctx, tx, e)
			case e.Kind == store.KindSession:
				loc, err = w.applySession(ctx, tx, e)
			default:
				loc, err = w.applyEdit(ctx, tx, cs, e, now)
			}
			if err != nil {
				return err
			}
			faultpoint.Hit("statement " + string(e.Op) + " " + e.ID)
			if loc != nil {
				locs[i] = *loc
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return w.dbError("commit the repair to", err)
	}
	faultpoint.Hit("commit " + w.info.Path)
	for i, l := range locs {
		cs.Edits[i].Loc = l
	}
	return nil
}

// checkCovered makes sure, inside the write transaction, that the parts a
// message delete or re-key takes along are the ones Targets listed for the
// backup, each still holding the data the backup read.
func (w *sqliteWriter) checkCovered(ctx context.Context, tx *sql.Tx, cs *store.ChangeSet) error {
	if !w.seen.Listed(cs) {
		return nil
	}
	for _, e := range cs.Edits {
		if e.Kind != store.KindMessage || e.Op == store.OpUpdate || e.Op == store.OpAdd {
			continue
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, data FROM part WHERE message_id = ?`, e.ID)
		if err != nil {
			return w.dbError("read", err)
		}
		var targets []store.Target
		var images []store.Image
		for rows.Next() {
			var id string
			var data any
			if err := rows.Scan(&id, &data); err != nil {
				rows.Close()
				return w.dbError("read", err)
			}
			t := store.Target{Kind: store.KindPart, ID: id, Path: w.info.Path, Table: "part"}
			targets = append(targets, t)
			images = append(images, store.Image{Target: t, Exists: true, Data: asBytes(data)})
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return w.dbError("read", err)
		}
		if t, ok := w.seen.Uncovered(cs, targets); ok {
			return store.NotBackedUp(t)
		}
		if err := w.seen.Changed(cs, images); err != nil {
			return err
		}
	}
	return nil
}

// current reads a row's rowid and data inside the transaction (a session
// row's body).
func (w *sqliteWriter) current(ctx context.Context, tx *sql.Tx, table, id string) (rowid int64, data []byte, ok bool, err error) {
	if table == "session" {
		im, err := w.readImage(ctx, tx, store.Target{Kind: store.KindSession, ID: id, Path: w.info.Path, Table: table})
		return rowidOf(im), im.Data, im.Exists, err
	}
	var v any
	err = tx.QueryRowContext(ctx, `SELECT rowid, data FROM `+table+` WHERE id = ?`, id).Scan(&rowid, &v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil, false, nil
	}
	if err != nil {
		return 0, nil, false, err
	}
	return rowid, asBytes(v), true, nil
}

func asBytes(v any) []byte {
	switch x := v.(type) {
	case string:
		return []byte(x)
	case []byte:
		return x
	case nil:
		return nil
	}
	return []byte(fmt.Sprint(v))
}

func (w *sqliteWriter) applyEdit(ctx context.Context, tx *sql.Tx, cs *store.ChangeSet, e *store.Edit, now int64) (*store.Location, error) {
	table, err := tableFor(e.Kind)
	if err != nil {
		return nil, fmt.Errorf("%s %s %s: %w", e.Op, e.Kind, e.ID, err)
	}
	fail := func(err error) error {
		return w.dbError(fmt.Sprintf("%s %s %s in", e.Op, e.Kind, e.ID), err)
	}
	rowid, data, exists, err := w.current(ctx, tx, table, e.ID)
	if err != nil {
		return nil, fail(err)
	}
	where := w.info.Path + ":" + table
	if e.Op == store.OpAdd {
		if exists {
			return nil, fmt.Errorf("cannot add %s %s to %s: a row with that id exists; nothing was written", e.Kind, e.ID, w.info.Path)
		}
		ses := e.SessionID
		if ses == "" {
			ses = cs.SessionID
		}
		created := e.Created
		if created == 0 {
			created = now
		}
		var res sql.Result
		if e.Kind == store.KindMessage {
			res, err = tx.ExecContext(ctx, `INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)`,
				e.ID, ses, created, now, string(e.After))
		} else {
			if e.MessageID == "" {
				return nil, fmt.Errorf("cannot add part %s: no message id", e.ID)
			}
			res, err = tx.ExecContext(ctx, `INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)`,
				e.ID, e.MessageID, ses, created, now, string(e.After))
		}
		if err != nil {
			return nil, fail(err)
		}
		rid, _ := res.LastInsertId()
		return &store.Location{Path: w.info.Path, Table: table, RowID: rid}, nil
	}
	if !exists {
		return nil, store.Changed(where, e.Kind, e.ID, "was deleted")
	}
	if !bytes.Equal(data, e.Before) && !(e.Op == store.OpQuarantine && e.Before == nil) {
		return nil, store.Changed(where, e.Kind, e.ID, "was modified")
	}
	switch e.Op {
	case store.OpUpdate:
		_, err = tx.ExecContext(ctx, `UPDATE `+table+` SET data = ?, time_updated = ? WHERE id = ?`, string(e.After), now, e.ID)
	case store.OpDelete, store.OpQuarantine:
		// Deleting a message deletes its parts (ON DELETE CASCADE).
		_, err = tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE id = ?`, e.ID)
	case store.OpRekey:
		if _, _, taken, cerr := w.current(ctx, tx, table, e.NewID); cerr != nil {
			return nil, fail(cerr)
		} else if taken {
			return nil, fmt.Errorf("cannot re-key %s %s in %s: %s already exists; nothing was written", e.Kind, e.ID, w.info.Path, e.NewID)
		}
		body := data
		if len(e.After) > 0 {
			body = e.After
		}
		_, err = tx.ExecContext(ctx, `UPDATE `+table+` SET id = ?, data = ?, time_updated = ? WHERE id = ?`, e.NewID, string(body), now, e.ID)
		if err == nil && e.Kind == store.KindMessage {
			_, err = tx.ExecContext(ctx, `UPDATE part SET message_id = ?, time_updated = ? WHERE message_id = ?`, e.NewID, now, e.ID)
		}
	}
	if err != nil {
		return nil, fail(err)
	}
	return &store.Location{Path: w.info.Path, Table: table, RowID: rowid}, nil
}

// Planned is every row as cs leaves it, from the rows' images before:
// updated and added rows hold their After body, deleted and quarantined
// ones (and the parts of a deleted message) are gone, a re-keyed row is
// gone under its old id and holds its body under the new one. Only the
// data column is planned for message and part rows; Apply sets the other
// columns. A session row is planned whole: its columns and the body they
// render.
func (w *sqliteWriter) Planned(ctx context.Context, cs *store.ChangeSet, before []store.Image) ([]store.Image, error) {
	if err := cs.Check(); err != nil {
		return nil, err
	}
	if err := checkSessionOps(cs); err != nil {
		return nil, err
	}
	var cols []sessionColumn
	out := make([]store.Image, len(before))
	at := map[store.Target]int{}
	for i, im := range before {
		out[i] = store.Image{Target: im.Target, Exists: im.Exists, Data: im.Data, Blob: im.Blob, Columns: im.Columns}
		at[im.Target] = i
	}
	row := func(kind store.Kind, id string) (*store.Image, error) {
		table, err := tableFor(kind)
		if err != nil {
			return nil, err
		}
		i, ok := at[store.Target{Kind: kind, ID: id, Path: w.info.Path, Table: table}]
		if !ok {
			return nil, fmt.Errorf("cannot plan %s %s: Targets did not list it", kind, id)
		}
		return &out[i], nil
	}
	for _, e := range cs.Edits {
		im, err := row(e.Kind, e.ID)
		if err != nil {
			return nil, err
		}
		if e.Kind == store.KindSession && e.Op != store.OpDelete {
			if cols == nil {
				if cols, err = sessionColumns(ctx, w.db); err != nil {
					return nil, w.dbError("read", err)
				}
			}
			var changes []sessionChange
			if e.Op == store.OpAdd {
				changes, err = addValues(&e, cols)
			} else {
				changes, err = updateChanges(&e, cols)
			}
			if err != nil {
				return nil, err
			}
			plannedSession(im, cols, changes)
			continue
		}
		switch e.Op {
		case store.OpUpdate, store.OpAdd:
			im.Exists, im.Data, im.Blob = true, e.After, false
		case store.OpDelete, store.OpQuarantine:
			im.Exists, im.Data = false, nil
			if e.Kind == store.KindMessage {
				for i := range out {
					if out[i].Table == "part" && columnText(out[i].Columns, "message_id") == e.ID {
						out[i].Exists, out[i].Data = false, nil
					}
				}
			}
		case store.OpRekey:
			body := im.Data
			if len(e.After) > 0 {
				body = e.After
			}
			to, err := row(e.Kind, e.NewID)
			if err != nil {
				return nil, err
			}
			to.Exists, to.Data, to.Blob = true, body, false // Apply writes TEXT
			im.Exists, im.Data = false, nil
		}
	}
	return out, nil
}

// columnText is the text value of a column, "" when it is absent or not
// text.
func columnText(cols []store.Column, name string) string {
	for _, c := range cols {
		if c.Name == name && c.Text != nil {
			return *c.Text
		}
	}
	return ""
}

func (w *sqliteWriter) Targets(ctx context.Context, cs *store.ChangeSet) ([]store.Target, error) {
	if err := cs.Check(); err != nil {
		return nil, err
	}
	if err := checkSessionOps(cs); err != nil {
		return nil, err
	}
	if cs.Empty() {
		return nil, nil
	}
	var out []store.Target
	seen := map[store.Target]bool{}
	add := func(t store.Target) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, e := range cs.Edits {
		table, err := tableFor(e.Kind)
		if err != nil {
			return nil, fmt.Errorf("%s %s %s: %w", e.Op, e.Kind, e.ID, err)
		}
		add(store.Target{Kind: e.Kind, ID: e.ID, Path: w.info.Path, Table: table})
		if e.Op == store.OpRekey {
			add(store.Target{Kind: e.Kind, ID: e.NewID, Path: w.info.Path, Table: table})
		}
		if e.Kind == store.KindSession && e.Op == store.OpDelete {
			why, err := sessionBlockers(ctx, w.db, e.ID, deletedMessages(cs))
			if err != nil {
				return nil, w.dbError("read", err)
			}
			if why != "" {
				return nil, fmt.Errorf("cannot delete session %s from %s: %s; nothing was written", e.ID, w.info.Path, why)
			}
		}
		if e.Kind == store.KindMessage && e.Op != store.OpUpdate && e.Op != store.OpAdd {
			ids, err := w.partIDs(ctx, e.ID)
			if err != nil {
				return nil, err
			}
			for _, id := range ids {
				add(store.Target{Kind: store.KindPart, ID: id, Path: w.info.Path, Table: "part"})
			}
		}
	}
	w.seen.Remember(cs, out)
	return out, nil
}

func (w *sqliteWriter) partIDs(ctx context.Context, messageID string) ([]string, error) {
	rows, err := w.db.QueryContext(ctx, `SELECT id FROM part WHERE message_id = ? ORDER BY id`, messageID)
	if err != nil {
		return nil, w.dbError("read", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, w.dbError("read", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, w.dbError("read", err)
	}
	return ids, nil
}

func (w *sqliteWriter) Read(ctx context.Context, targets []store.Target) ([]store.Image, error) {
	out := make([]store.Image, 0, len(targets))
	for _, t := range targets {
		im, err := w.readImage(ctx, w.db, t)
		if err != nil {
			return nil, err
		}
		out = append(out, im)
	}
	w.seen.Saw(out)
	return out, nil
}

// readImage reads a row's image through q (the database, or a
// transaction): its data column, or for a session row the body the reader
// builds from its columns, and every other column.
func (w *sqliteWriter) readImage(ctx context.Context, q querier, t store.Target) (store.Image, error) {
	im := store.Image{Target: t}
	if _, err := tableFor(store.Kind(t.Table)); err != nil {
		return im, fmt.Errorf("%s: %w", t, err)
	}
	rows, err := q.QueryContext(ctx, `SELECT rowid, * FROM `+t.Table+` WHERE id = ?`, t.ID)
	if err != nil {
		return im, w.dbError("read", err)
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return im, w.dbError("read", err)
	}
	if !rows.Next() {
		return im, w.rowsErr(rows)
	}
	vals := make([]any, len(names))
	ptrs := make([]any, len(names))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return im, w.dbError("read", err)
	}
	im.Exists = true
	for i, n := range names {
		if i == 0 {
			n = "rowid" // kept so a re-inserted row gets its old rowid back
		}
		switch n {
		case "id":
		case "data":
			im.Data = asBytes(vals[i])
			if im.Data == nil {
				im.Data = []byte{}
			}
			_, im.Blob = vals[i].([]byte)
		default:
			im.Columns = append(im.Columns, columnOf(n, vals[i]))
		}
	}
	if t.Table == "session" {
		im.Data = sqlitedb.SessionBody(names[1:], vals[1:])
	}
	return im, w.rowsErr(rows)
}

func (w *sqliteWriter) rowsErr(rows *sql.Rows) error {
	if err := rows.Err(); err != nil {
		return w.dbError("read", err)
	}
	return nil
}

func columnOf(name string, v any) store.Column {
	c := store.Column{Name: name}
	switch x := v.(type) {
	case int64:
		c.Int = &x
	case float64:
		c.Real = &x
	case string:
		c.Text = &x
	case []byte:
		c.Blob = append([]byte{}, x...)
		if c.Blob == nil {
			c.Blob = []byte{}
		}
	case bool:
		n := int64(0)
		if x {
			n = 1
		}
		c.Int = &n
	case time.Time:
		s := x.Format(time.RFC3339Nano)
		c.Text = &s
	}
	return c
}

// columnValue is the value to bind for a column.
func columnValue(c store.Column) any {
	switch {
	case c.Int != nil:
		return *c.Int
	case c.Real != nil:
		return *c.Real
	case c.Text != nil:
		return *c.Text
	case c.Blob != nil:
		return c.Blob
	}
	return nil
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// Restore puts rows back in one transaction, exactly: every column,
// rowid included when it is free. Foreign keys are switched off for the
// transaction so deleting a row the run added (a re-keyed message's new id)
// cascades to nothing; rows the run added are deleted first (freeing their
// rowids), then every row that existed is re-inserted or overwritten. A
// message the run added that has gained parts since is not deleted: the
// restore fails and changes nothing.
func (w *sqliteWriter) Restore(ctx context.Context, images []store.Image) error {
	if len(images) == 0 {
		return nil
	}
	for _, im := range images {
		if im.Path != w.info.Path {
			return fmt.Errorf("cannot restore %s into %s: it belongs to another database", im.Target, w.info.Path)
		}
		if _, err := tableFor(store.Kind(im.Table)); err != nil {
			return fmt.Errorf("%s: %w", im.Target, err)
		}
	}
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return w.dbError("restore rows in", err)
	}
	defer conn.Close()
	// foreign_keys cannot change inside a transaction: set it around it.
	if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
		return w.dbError("restore rows in", err)
	}
	defer conn.ExecContext(context.Background(), `PRAGMA foreign_keys = ON`)
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return w.dbError("restore rows in", err)
	}
	defer tx.Rollback()
	if store.Expects(images) {
		cur := make([]store.Image, len(images))
		for i, im := range images {
			cur[i].Target = im.Target
			if im.Expect == nil {
				continue
			}
			_, data, ok, err := w.current(ctx, tx, im.Table, im.ID)
			if err != nil {
				return w.dbError("restore rows in", err)
			}
			cur[i].Exists, cur[i].Data = ok, data
		}
		if err := store.Unexpected(images, cur); err != nil {
			return err
		}
	}
	order := []struct {
		table  string
		exists bool
	}{{"part", false}, {"message", false}, {"session", false}, {"session", true}, {"message", true}, {"part", true}}
	for _, o := range order {
		for _, im := range images {
			if im.Table != o.table || im.Exists != o.exists {
				continue
			}
			if err := restoreRow(ctx, tx, im); err != nil {
				return w.dbError("restore "+im.Table+" "+im.ID+" in", err)
			}
		}
	}
	for _, im := range images {
		if im.Table != "message" || im.Exists {
			continue
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM part WHERE message_id = ?`, im.ID).Scan(&n); err != nil {
			return w.dbError("restore rows in", err)
		}
		if n > 0 {
			return fmt.Errorf("cannot restore %s: message %s, which the run created, now has %d parts that were added later; nothing was restored", w.info.Path, im.ID, n)
		}
	}
	for _, im := range images {
		if im.Table != "session" || im.Exists {
			continue
		}
		why, err := sessionBlockers(ctx, tx, im.ID, nil)
		if err != nil {
			return w.dbError("restore rows in", err)
		}
		if why != "" {
			return fmt.Errorf("cannot restore %s: session %s, which the run created, is in use since: %s; nothing was restored", w.info.Path, im.ID, why)
		}
	}
	if err := tx.Commit(); err != nil {
		return w.dbError("commit the restore to", err)
	}
	return nil
}

func restoreRow(ctx context.Context, tx *sql.Tx, im store.Image) error {
	if !im.Exists {
		_, err := tx.ExecContext(ctx, `DELETE FROM `+im.Table+` WHERE id = ?`, im.ID)
		return err
	}
	cols := []string{"id", "data"}
	var data any = string(im.Data)
	if im.Blob {
		data = append([]byte{}, im.Data...) // a BLOB again, never NULL
	}
	args := []any{im.ID, data}
	if im.Table == "session" {
		// Its columns are the row; Data is the body they render.
		cols, args = cols[:1], args[:1]
	}
	for _, c := range im.Columns {
		if c.Name == "rowid" {
			var other string
			err := tx.QueryRowContext(ctx, `SELECT id FROM `+im.Table+` WHERE rowid = ?`, columnValue(c)).Scan(&other)
			if err == nil && other != im.ID {
				continue // taken by another row since: let SQLite pick one
			}
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		cols = append(cols, c.Name)
		args = append(args, columnValue(c))
	}
	quoted := make([]string, len(cols))
	marks := make([]string, len(cols))
	var sets []string
	for i, c := range cols {
		quoted[i] = quoteIdent(c)
		marks[i] = "?"
		if c != "id" && c != "rowid" {
			sets = append(sets, quoted[i]+" = excluded."+quoted[i])
		}
	}
	// An upsert, not INSERT OR REPLACE: replacing a message row would
	// delete its parts through the cascade.
	q := `INSERT INTO ` + im.Table + ` (` + strings.Join(quoted, ", ") + `) VALUES (` + strings.Join(marks, ", ") +
		`) ON CONFLICT (id) DO UPDATE SET ` + strings.Join(sets, ", ")
	_, err := tx.ExecContext(ctx, q, args...)
	return err
}

var _ store.Writer = (*sqliteWriter)(nil)
