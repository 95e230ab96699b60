package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/sessfix/sessfix/pkg/store"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// readBusyTimeout is how long a read waits for a lock held by another
// process (OpenCode uses the same 5 s). Tests shorten it.
var readBusyTimeout = DefaultBusyTimeout

// sqliteMagic starts every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// sqliteStore reads the v1 tables (session, message, part) of an OpenCode
// 1.2+ database through a read-only, query-only connection. It works while
// OpenCode has the database open in WAL mode and is writing: each Load
// reads one consistent snapshot inside one read transaction.
//
// Bodies are the data columns; ids, session and message membership come
// from the id, session_id and message_id columns. The session record's Raw
// is not stored as such: it is a JSON object built from the session row's
// columns, in column order.
type sqliteStore struct {
	info store.Info
	path string
	db   *sql.DB
	// tmp is a snapshot copy's directory, removed on Close.
	tmp string

	// stmts are the Load queries, prepared on first use and reused on
	// every connection of the pool (nil until then).
	stmtMu sync.Mutex
	stmts  *sqliteStmts
	// orphanMu guards orphanSessions: the session ids List saw with part
	// rows whose message does not exist. Load only looks for orphans in
	// those sessions; nil (List not called yet) means look in every one.
	orphanMu       sync.Mutex
	orphanSessions map[string]bool
}

// sqliteMode is how a database file is opened.
type sqliteMode int

const (
	sqliteReadOnly  sqliteMode = iota // mode=ro: the normal case
	sqliteImmutable                   // immutable=1: read-only directory, no WAL content
)

func sqliteDSN(path string, mode sqliteMode) string {
	ms := readBusyTimeout.Milliseconds()
	q := "mode=ro&_pragma=busy_timeout(" + strconv.FormatInt(ms, 10) + ")&_pragma=query_only(1)"
	if mode == sqliteImmutable {
		q += "&immutable=1"
	}
	return "file:" + uriPath(path) + "?" + q
}

// uriPath escapes the characters that end or alter the path part of an
// SQLite URI filename.
func uriPath(p string) string {
	p = filepath.ToSlash(p)
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	return r.Replace(p)
}

// isSQLiteFile reports whether the file at path starts with SQLite's magic
// header.
func isSQLiteFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var buf [len(sqliteMagic)]byte
	if _, err := io.ReadFull(f, buf[:]); err != nil {
		return false
	}
	return string(buf[:]) == sqliteMagic
}

// openSQLite opens an OpenCode database read-only and checks it holds the
// v1 tables. A database with OpenCode 2.x's session_v2 table returns an
// error wrapping store.ErrUnsupported; a database locked by an exclusive writer an
// error wrapping store.ErrLocked once the busy timeout has passed; a database that
// is not OpenCode's an error wrapping store.ErrNotFound.
//
// When the directory is read-only and the -shm file cannot be created, the
// database is read with immutable=1 if there is no WAL content, or from a
// private snapshot copy of the database and its -wal file otherwise; a note
// in Info says so.
func openSQLite(path string) (*sqliteStore, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", path, err)
	}
	if fi, err := os.Stat(abs); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
		// SQLite would take it for a database without tables.
		return nil, store.NotFoundf("%s is an empty file (0 bytes), not an opencode database", abs)
	}
	s, err := openSQLiteMode(abs, abs, sqliteReadOnly)
	if err == nil || !needsFallback(err) {
		return s, err
	}
	if _, shmErr := os.Stat(abs + "-shm"); shmErr == nil {
		return nil, err // the shared-memory file exists: the failure is something else
	}
	if fi, werr := os.Stat(abs + "-wal"); werr != nil || fi.Size() == 0 {
		s, err2 := openSQLiteMode(abs, abs, sqliteImmutable)
		if err2 != nil {
			return nil, err
		}
		s.info.Notes = append(s.info.Notes, abs+" read as immutable: its directory is read-only and it has no write-ahead log")
		return s, nil
	}
	return openSnapshot(abs, err)
}

// needsFallback reports whether opening failed because the shared-memory
// file of a WAL database could not be created or opened.
func needsFallback(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_IOERR:
		return true
	}
	return false
}

// openSnapshot copies the database and its -wal file into a private temp
// directory and reads the copy. Locations still name the original file.
func openSnapshot(abs string, cause error) (*sqliteStore, error) {
	tmp, err := os.MkdirTemp("", "sessfix-db-")
	if err != nil {
		return nil, fmt.Errorf("read %s: %w (and no snapshot copy could be made: %v)", abs, cause, err)
	}
	dst := filepath.Join(tmp, filepath.Base(abs))
	for _, suffix := range []string{"", "-wal"} {
		if err := copyFile(abs+suffix, dst+suffix); err != nil {
			os.RemoveAll(tmp)
			return nil, fmt.Errorf("read %s: %w (and no snapshot copy could be made: %v)", abs, cause, err)
		}
	}
	s, err := openSQLiteMode(dst, abs, sqliteReadOnly)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	s.tmp = tmp
	s.info.Notes = append(s.info.Notes, abs+" read from a snapshot copy: its directory is read-only and its write-ahead log has changes not yet merged")
	return s, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// openSQLiteMode opens file (which may be a snapshot copy) and reports
// locations as path.
func openSQLiteMode(file, path string, mode sqliteMode) (*sqliteStore, error) {
	db, err := sql.Open("sqlite", sqliteDSN(file, mode))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxIdleConns(4)
	s := &sqliteStore{info: store.Info{Shape: store.ShapeSQLite, Path: path}, path: path, db: db}
	if err := checkSchema(context.Background(), db, path); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// dbError names the database in a driver error and classifies it.
func (s *sqliteStore) dbError(err error) error { return dbError(s.path, "read", err) }

func (s *sqliteStore) Info() store.Info { return s.info }

func (s *sqliteStore) Close() error {
	s.stmtMu.Lock()
	if s.stmts != nil {
		s.stmts.close()
		s.stmts = nil
	}
	s.stmtMu.Unlock()
	err := s.db.Close()
	if s.tmp != "" {
		os.RemoveAll(s.tmp)
	}
	return err
}

// List returns the session rows plus the session ids that only appear in
// message rows, or in part rows whose message does not exist.
func (s *sqliteStore) List(ctx context.Context) ([]store.SessionRef, error) {
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
		sqliteOrphanSessions,
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

// sqliteOrphanSessions lists the sessions named by part rows whose message
// does not exist. The message ids are found in the (message_id, id) index
// alone, so the part rows themselves are only read for orphans; each
// distinct message id is looked up once (GROUP BY first), not once per
// part row, which makes the query about twice as cheap. NOT EXISTS, not
// NOT IN: a NULL message id would make NOT IN find nothing.
const sqliteOrphanSessions = `SELECT p.session_id, '', MAX(p.time_updated) FROM part p
		  WHERE p.message_id IN (SELECT mid FROM (SELECT message_id AS mid FROM part GROUP BY message_id)
		    WHERE NOT EXISTS (SELECT 1 FROM message m WHERE m.id = mid))
		  GROUP BY p.session_id`

// The queries of Load, prepared once per connection.
const (
	sqliteInfoQuery    = `SELECT rowid AS "rowid", * FROM session WHERE id = ?`
	sqliteMessageQuery = `SELECT rowid, id, time_created, time_updated, data FROM message
		WHERE session_id = ? ORDER BY time_created, id`
	sqlitePartColumns = `SELECT p.rowid, p.id, p.message_id, p.session_id, p.time_updated, p.data FROM part p `
	// Parts of the session's messages, whatever their session_id says.
	sqlitePartQuery = sqlitePartColumns + `WHERE p.message_id IN (SELECT id FROM message WHERE session_id = ?)
		ORDER BY p.message_id, p.id`
	// Parts that name the session but whose message does not exist.
	sqliteOrphanQuery = sqlitePartColumns + `WHERE p.session_id = ?
		AND NOT EXISTS (SELECT 1 FROM message m WHERE m.id = p.message_id) ORDER BY p.message_id, p.id`
)

type sqliteStmts struct {
	info, messages, parts, orphans *sql.Stmt
}

func (st *sqliteStmts) close() {
	for _, p := range []*sql.Stmt{st.info, st.messages, st.parts, st.orphans} {
		if p != nil {
			p.Close()
		}
	}
}

// prepare returns Load's prepared queries, preparing them on first use. A
// failure (a database locked past the busy timeout) is not remembered: the
// next Load tries again.
func (s *sqliteStore) prepare() (*sqliteStmts, error) {
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	if s.stmts != nil {
		return s.stmts, nil
	}
	st := &sqliteStmts{}
	for _, q := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&st.info, sqliteInfoQuery},
		{&st.messages, sqliteMessageQuery},
		{&st.parts, sqlitePartQuery},
		{&st.orphans, sqliteOrphanQuery},
	} {
		p, err := s.db.Prepare(q.sql)
		if err != nil {
			st.close()
			return nil, err
		}
		*q.dst = p
	}
	s.stmts = st
	return st, nil
}

// mayHaveOrphans reports whether Load must look for orphaned parts naming
// the session: List saw some, or List has not run.
func (s *sqliteStore) mayHaveOrphans(id string) bool {
	s.orphanMu.Lock()
	defer s.orphanMu.Unlock()
	return s.orphanSessions == nil || s.orphanSessions[id]
}

// Load reads one session inside one read transaction.
func (s *sqliteStore) Load(ctx context.Context, ref store.SessionRef) (*store.Session, error) {
	stmts, err := s.prepare()
	if err != nil {
		return nil, s.dbError(err)
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.dbError(err)
	}
	defer tx.Rollback()
	sess := &store.Session{Store: s.info, ID: ref.ID}
	if err := s.loadInfo(ctx, tx, stmts.info, sess); err != nil {
		return nil, s.dbError(err)
	}

	rows, err := tx.StmtContext(ctx, stmts.messages).QueryContext(ctx, ref.ID)
	if err != nil {
		return nil, s.dbError(err)
	}
	byID := map[string]*store.Message{}
	for rows.Next() {
		var rowid, created, updated int64
		var id string
		var data columnBytes
		if err := rows.Scan(&rowid, &id, &created, &updated, &data); err != nil {
			rows.Close()
			return nil, s.dbError(err)
		}
		rec := s.record(store.KindMessage, "message", rowid, id, updated, data)
		if m := sess.AddMessage(rec, ref.ID); m != nil {
			m.Created = created
			byID[id] = m
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
func (s *sqliteStore) loadParts(ctx context.Context, tx *sql.Tx, sess *store.Session, byID map[string]*store.Message, q *sql.Stmt, args ...any) error {
	rows, err := tx.StmtContext(ctx, q).QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var rowid, updated int64
		var id, mid, sid string
		var data columnBytes
		if err := rows.Scan(&rowid, &id, &mid, &sid, &updated, &data); err != nil {
			return err
		}
		rec := s.record(store.KindPart, "part", rowid, id, updated, data)
		p := sess.MakePart(rec, mid, sid)
		if p == nil {
			continue
		}
		if m := byID[mid]; m != nil {
			m.Parts = append(m.Parts, p)
		} else {
			sess.Orphans = append(sess.Orphans, p)
		}
	}
	return rows.Err()
}

// columnBytes scans a data column as the bytes database/sql would give a
// *[]byte, without copying the text the driver already copied into a Go
// string: the bytes share that string's memory. Nothing writes into a
// record's Raw in place (edits build new slices), so they are never changed.
type columnBytes []byte

func (c *columnBytes) Scan(src any) error {
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

func (s *sqliteStore) record(kind store.Kind, table string, rowid int64, id string, updated int64, data []byte) *store.Record {
	rec := &store.Record{Kind: kind, ID: id, Raw: data, Modified: time.UnixMilli(updated),
		Loc: store.Location{Path: s.path, Table: table, RowID: rowid}}
	rec.Check()
	return rec
}

// loadInfo reads the session row into sess.Info (a JSON object of the
// row's columns) and sets Title, or sets InfoMissing.
func (s *sqliteStore) loadInfo(ctx context.Context, tx *sql.Tx, q *sql.Stmt, sess *store.Session) error {
	rows, err := tx.StmtContext(ctx, q).QueryContext(ctx, sess.ID)
	if err != nil {
		return err
	}
	defer rows.Close()
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
	buf := []byte{'{'}
	var updated int64
	for i := 1; i < len(names); i++ {
		if i > 1 {
			buf = append(buf, ',')
		}
		buf = appendJSONString(buf, names[i])
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
	buf = append(buf, '}')
	sess.Info = &store.Record{Kind: store.KindSession, ID: sess.ID, Raw: buf, Modified: time.UnixMilli(updated),
		Loc: store.Location{Path: s.path, Table: "session", RowID: rowid}}
	return nil
}

// appendJSONString appends s as a JSON string, without HTML escaping.
func appendJSONString(buf []byte, s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return append(buf, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
}
