package sqlitedb

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/sessfix/sessfix/pkg/store"
)

// V1 reads the 1.x tables (session, message, part) of an OpenCode database
// through a read-only, query-only connection. It works while OpenCode has
// the database open in WAL mode and is writing: each Load reads one
// consistent snapshot inside one read transaction.
//
// Bodies are the data columns; ids, session and message membership come
// from the id, session_id and message_id columns. The session record's Raw
// is not stored as such: it is a JSON object built from the session row's
// columns, in column order.
//
// A V1 is a store.Store (pkg/store/sqlite's); Close closes its DB.
type V1 struct {
	info store.Info
	path string
	d    *DB
	db   *sql.DB

	// stmts are the Load queries, prepared on first use and reused on
	// every connection of the pool (nil until then).
	stmtMu sync.Mutex
	stmts  *v1Stmts
	// orphanMu guards orphanSessions: the session ids List saw with part
	// rows whose message does not exist. Load only looks for orphans in
	// those sessions; nil (List not called yet) means look in every one.
	orphanMu       sync.Mutex
	orphanSessions map[string]bool
}

// NewV1 reads the 1.x tables of d, as the store info describes (its
// Notes get d's).
func NewV1(d *DB, info store.Info) *V1 {
	info.Notes = append(info.Notes, d.Notes...)
	return &V1{info: info, path: d.Path, d: d, db: d.SQL}
}

// dbError names the database in a driver error and classifies it.
func (s *V1) dbError(err error) error { return Error(s.path, "read", err) }

func (s *V1) Info() store.Info { return s.info }

// Close closes the prepared queries and the database.
func (s *V1) Close() error {
	s.stmtMu.Lock()
	if s.stmts != nil {
		s.stmts.close()
		s.stmts = nil
	}
	s.stmtMu.Unlock()
	return s.d.Close()
}

// List returns the session rows plus the session ids that only appear in
// message rows, or in part rows whose message does not exist.
func (s *V1) List(ctx context.Context) ([]store.SessionRef, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.dbError(err)
	}
	defer tx.Rollback()
	var out []store.SessionRef
	seen := map[string]bool{}
	orphans := map[string]bool{}
	queries := []string{
		`SELECT id, title, time_updated FROM session`,
		`SELECT session_id, '', MAX(time_updated) FROM message
		  WHERE session_id NOT IN (SELECT id FROM session) GROUP BY session_id`,
		orphanSessionsQuery,
	}
	for qi, q := range queries {
		rows, err := tx.QueryContext(ctx, q)
		if err != nil {
			return nil, s.dbError(err)
		}
		for rows.Next() {
			var id, title sql.NullString
			var upd sql.NullInt64
			if err := rows.Scan(&id, &title, &upd); err != nil {
				rows.Close()
				return nil, s.dbError(err)
			}
			if qi == 2 {
				orphans[id.String] = true
			}
			if seen[id.String] {
				continue
			}
			seen[id.String] = true
			r := store.SessionRef{ID: id.String, Title: title.String}
			if upd.Valid && upd.Int64 > 0 {
				r.Updated = time.UnixMilli(upd.Int64)
			}
			out = append(out, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, s.dbError(err)
		}
	}
	s.orphanMu.Lock()
	s.orphanSessions = orphans
	s.orphanMu.Unlock()
	store.SortRefs(out)
	return out, nil
}

// orphanSessionsQuery lists the sessions named by part rows whose message
// does not exist. The message ids are found in the (message_id, id) index
// alone, so the part rows themselves are only read for orphans; each
// distinct message id is looked up once (GROUP BY first), not once per
// part row, which makes the query about twice as cheap. NOT EXISTS, not
// NOT IN: a NULL message id would make NOT IN find nothing.
const orphanSessionsQuery = `SELECT p.session_id, '', MAX(p.time_updated) FROM part p
		  WHERE p.message_id IN (SELECT mid FROM (SELECT message_id AS mid FROM part GROUP BY message_id)
		    WHERE NOT EXISTS (SELECT 1 FROM message m WHERE m.id = mid))
		  GROUP BY p.session_id`

// The queries of Load, prepared once per connection.
const (
	infoQuery    = `SELECT rowid AS "rowid", * FROM session WHERE id = ?`
	messageQuery = `SELECT rowid, id, time_created, time_updated, data FROM message
		WHERE session_id = ? ORDER BY time_created, id`
	// ?1 is the session's id. A part's session_id is read only when it is
	// not the session's (partSession): the empty blob stands for "the
	// session's" (an empty blob stored as session_id is read as '', the
	// text it scans to), so the usual row copies three texts, not four.
	partColumns = `SELECT p.rowid, p.id, p.message_id,
		CASE WHEN typeof(p.session_id) = 'text' AND p.session_id = ?1 COLLATE BINARY THEN x''
			WHEN p.session_id = x'' THEN '' ELSE p.session_id END AS session_id,
		p.time_updated, p.data FROM part p `
	// Parts of the session's messages, whatever their session_id says.
	partQuery = partColumns + `WHERE p.message_id IN (SELECT id FROM message WHERE session_id = ?1)
		ORDER BY p.message_id, p.id`
	// Parts that name the session but whose message does not exist.
	orphanQuery = partColumns + `WHERE p.session_id = ?1
		AND NOT EXISTS (SELECT 1 FROM message m WHERE m.id = p.message_id) ORDER BY p.message_id, p.id`
	// The project rows (Session.Projects); a database without the table
	// (fixtures, tools that write only the session tables) has none.
	projectQuery = `SELECT id, worktree FROM project ORDER BY id`
)

type v1Stmts struct {
	info, messages, parts, orphans *sql.Stmt
	projects                       *sql.Stmt // nil: no project table
}

func (st *v1Stmts) close() {
	for _, p := range []*sql.Stmt{st.info, st.messages, st.parts, st.orphans, st.projects} {
		if p != nil {
			p.Close()
		}
	}
}

// prepare returns Load's prepared queries, preparing them on first use. A
// failure (a database locked past the busy timeout) is not remembered: the
// next Load tries again.
func (s *V1) prepare() (*v1Stmts, error) {
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	if s.stmts != nil {
		return s.stmts, nil
	}
	st := &v1Stmts{}
	for _, q := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&st.info, infoQuery},
		{&st.messages, messageQuery},
		{&st.parts, partQuery},
		{&st.orphans, orphanQuery},
	} {
		p, err := s.db.Prepare(q.sql)
		if err != nil {
			st.close()
			return nil, err
		}
		*q.dst = p
	}
	p, err := s.db.Prepare(projectQuery)
	switch {
	case err == nil:
		st.projects = p
	case !strings.Contains(err.Error(), "no such table") && !strings.Contains(err.Error(), "no such column"):
		st.close()
		return nil, err
	}
	s.stmts = st
	return st, nil
}

// mayHaveOrphans reports whether Load must look for orphaned parts naming
// the session: List saw some, or List has not run.
func (s *V1) mayHaveOrphans(id string) bool {
	s.orphanMu.Lock()
	defer s.orphanMu.Unlock()
	return s.orphanSessions == nil || s.orphanSessions[id]
}

// Load reads one session inside one read transaction.
func (s *V1) Load(ctx context.Context, ref store.SessionRef) (*store.Session, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.dbError(err)
	}
	defer tx.Rollback()
	return s.LoadIn(ctx, tx, ref)
}

// LoadIn reads one session inside tx, a read transaction on the V1's DB
// (so that a caller reads other tables in the same snapshot).
func (s *V1) LoadIn(ctx context.Context, tx *sql.Tx, ref store.SessionRef) (*store.Session, error) {
	stmts, err := s.prepare()
	if err != nil {
		return nil, s.dbError(err)
	}
	sess := &store.Session{Store: s.info, ID: ref.ID}
	if err := s.loadInfo(ctx, tx, stmts.info, sess); err != nil {
		return nil, s.dbError(err)
	}
	if stmts.projects != nil {
		if sess.Projects, err = loadProjects(ctx, tx, stmts.projects); err != nil {
			return nil, s.dbError(err)
		}
	}

	rows, err := tx.StmtContext(ctx, stmts.messages).QueryContext(ctx, ref.ID)
	if err != nil {
		return nil, s.dbError(err)
	}
	byID := map[string]*store.Message{}
	var r messageRow
	dest := r.dest()
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return nil, s.dbError(err)
		}
		rec := s.record(store.KindMessage, "message", r.rowid, r.id, r.updated, r.data)
		if m := sess.AddMessageRecord(rec, ref.ID); m != nil {
			m.Created = r.created
			byID[r.id] = m
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, s.dbError(err)
	}

	if err := s.loadParts(ctx, tx, sess, byID, stmts.parts, ref.ID); err != nil {
		return nil, s.dbError(err)
	}
	if s.mayHaveOrphans(ref.ID) {
		if err := s.loadParts(ctx, tx, sess, nil, stmts.orphans, ref.ID); err != nil {
			return nil, s.dbError(err)
		}
	}
	return sess, nil
}

// loadParts runs a part query and puts each part under its message in
// byID, or among the Orphans when byID does not hold it.
func (s *V1) loadParts(ctx context.Context, tx *sql.Tx, sess *store.Session, byID map[string]*store.Message, q *sql.Stmt, session string) error {
	rows, err := tx.StmtContext(ctx, q).QueryContext(ctx, session)
	if err != nil {
		return err
	}
	defer rows.Close()
	r := newPartRow(session)
	dest := r.dest()
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		rec := s.record(store.KindPart, "part", r.rowid, r.id, r.updated, r.data)
		p := sess.MakePartRecord(rec, r.mid, r.sid.id)
		if p == nil {
			continue
		}
		if m := byID[r.mid]; m != nil {
			m.Parts = append(m.Parts, p)
		} else {
			sess.Orphans = append(sess.Orphans, p)
		}
	}
	return rows.Err()
}

// messageRow and partRow hold one row of the message and part queries.
// Their fields are scanned into again for every row (through dest, made
// once per query): the values are new on every row (the driver allocates
// each text), so nothing scanned is ever overwritten in place, and a row
// costs no allocation for the scan's destinations.
type messageRow struct {
	rowid, created, updated int64
	id                      string
	data                    Bytes
}

func (r *messageRow) dest() []any {
	return []any{&r.rowid, &r.id, &r.created, &r.updated, &r.data}
}

type partRow struct {
	rowid, updated int64
	id, mid        string
	sid            partSession
	data           Bytes
}

// newPartRow is the row of a part query for session.
func newPartRow(session string) *partRow { return &partRow{sid: partSession{session: session}} }

func (r *partRow) dest() []any {
	return []any{&r.rowid, &r.id, &r.mid, &r.sid, &r.updated, &r.data}
}

// partSession scans the part queries' session column into id: the empty
// blob the query gives for the session's own id is session, any other
// value is converted as database/sql converts it into a string (NULL
// fails, as it does for a *string).
type partSession struct {
	session, id string
}

func (c *partSession) Scan(src any) error {
	switch v := src.(type) {
	case []byte:
		if len(v) == 0 {
			c.id = c.session
			return nil
		}
		c.id = string(v)
	case string:
		c.id = v
	case nil:
		return errors.New("converting NULL to string is unsupported")
	default:
		var ns sql.NullString
		if err := ns.Scan(v); err != nil {
			return err
		}
		c.id = ns.String
	}
	return nil
}

// Bytes scans a data column as the bytes database/sql would give a
// *[]byte, without copying the text the driver already copied into a Go
// string: the bytes share that string's memory. Nothing writes into a
// record's Raw in place (edits build new slices), so they are never changed.
type Bytes []byte

func (c *Bytes) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*c = nil
	case string:
		if v == "" {
			*c = []byte{}
			break
		}
		*c = unsafe.Slice(unsafe.StringData(v), len(v))
	case []byte:
		*c = bytes.Clone(v)
	case int64:
		*c = strconv.AppendInt(nil, v, 10)
	case float64:
		*c = strconv.AppendFloat(nil, v, 'g', -1, 64)
	case bool:
		*c = strconv.AppendBool(nil, v)
	case time.Time:
		*c = []byte(v.Format(time.RFC3339Nano))
	default:
		return fmt.Errorf("unsupported type %T for a data column", src)
	}
	return nil
}

// record is the record of a row, checked (store.Record.Check); by value, so
// that a usable one is never allocated apart from its Message or Part.
func (s *V1) record(kind store.Kind, table string, rowid int64, id string, updated int64, data []byte) store.Record {
	rec := store.Record{Kind: kind, ID: id, Raw: data, Modified: time.UnixMilli(updated),
		Loc: store.Location{Path: s.path, Table: table, RowID: rowid}}
	rec.Check()
	return rec
}

// loadInfo reads the session row into sess.Info (a JSON object of the
// row's columns) and sets Title, or sets InfoMissing.
func (s *V1) loadInfo(ctx context.Context, tx *sql.Tx, q *sql.Stmt, sess *store.Session) error {
	rows, err := tx.StmtContext(ctx, q).QueryContext(ctx, sess.ID)
	if err != nil {
		return err
	}
	defer rows.Close()
	return SessionRow(rows, s.path, "session", sess)
}

// SessionRow reads the first row of rows, a `SELECT rowid AS "rowid", *`
// of a session table, into sess.Info: a JSON object of the row's columns
// in column order, located at table and the rowid. It sets Title from the
// title column. Without a row it sets InfoMissing.
func SessionRow(rows *sql.Rows, path, table string, sess *store.Session) error {
	if !rows.Next() {
		sess.InfoMissing = true
		return rows.Err()
	}
	names, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]any, len(names))
	ptrs := make([]any, len(names))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return err
	}
	rowid, _ := vals[0].(int64)
	var updated int64
	for i := 1; i < len(names); i++ {
		switch names[i] {
		case "title":
			switch v := vals[i].(type) {
			case string:
				sess.Title = v
			case []byte:
				sess.Title = string(v)
			}
		case "time_updated":
			updated, _ = vals[i].(int64)
		}
	}
	buf := SessionBody(names[1:], vals[1:])
	sess.Info = &store.Record{Kind: store.KindSession, ID: sess.ID, Raw: buf, Modified: time.UnixMilli(updated),
		Loc: store.Location{Path: path, Table: table, RowID: rowid}}
	return nil
}

// SessionBody is the session record's body for a row whose columns are
// names, holding vals: a JSON object of the columns in order, each value a
// JSON null, number or string (text and BLOB columns alike). The writer
// builds the same body to compare and plan session rows.
func SessionBody(names []string, vals []any) []byte {
	buf := []byte{'{'}
	for i, name := range names {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendJSONString(buf, name)
		buf = append(buf, ':')
		switch v := vals[i].(type) {
		case nil:
			buf = append(buf, "null"...)
		case int64:
			buf = strconv.AppendInt(buf, v, 10)
		case float64:
			buf = strconv.AppendFloat(buf, v, 'g', -1, 64)
		case []byte:
			buf = appendJSONString(buf, string(v))
		case string:
			buf = appendJSONString(buf, v)
		default:
			buf = appendJSONString(buf, fmt.Sprint(v))
		}
	}
	return append(buf, '}')
}

// appendJSONString appends s as a JSON string, without HTML escaping.
func appendJSONString(buf []byte, s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return append(buf, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
}

// QueryOnly runs the queries Load runs for one session (its messages and
// its parts, in one read transaction) and scans every column into the
// types Load uses, but builds nothing: what reading the session out of the
// database costs before any record is made. It returns the rows read. For
// benchmarks.
func (s *V1) QueryOnly(id string) (int, error) {
	stmts, err := s.prepare()
	if err != nil {
		return 0, err
	}
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	n := 0
	rows, err := tx.StmtContext(ctx, stmts.messages).QueryContext(ctx, id)
	if err != nil {
		return 0, err
	}
	var m messageRow
	dest := m.dest()
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return 0, err
		}
		n++
	}
	rows.Close()
	if rows, err = tx.StmtContext(ctx, stmts.parts).QueryContext(ctx, id); err != nil {
		return 0, err
	}
	defer rows.Close()
	dest = newPartRow(id).dest()
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return 0, err
		}
		n++
	}
	return n, rows.Err()
}

// loadProjects reads the project rows; never nil.
func loadProjects(ctx context.Context, tx *sql.Tx, q *sql.Stmt) ([]store.Project, error) {
	rows, err := tx.StmtContext(ctx, q).QueryContext(ctx)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []store.Project{}
	for rows.Next() {
		var id string
		var worktree sql.NullString
		if err := rows.Scan(&id, &worktree); err != nil {
			return nil, err
		}
		out = append(out, store.Project{ID: id, Worktree: worktree.String})
	}
	return out, rows.Err()
}
