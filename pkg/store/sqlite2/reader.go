package sqlite2

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/internal/sqlitedb"
)

// v2Columns are OpenCode 2's tables and the columns sessfix reads in them.
var v2Columns = []struct {
	table   string
	columns []string
}{
	{"session_v2", []string{"id", "project_id", "directory", "title", "time_created", "time_updated"}},
	{"session_message", []string{"id", "session_id", "type", "seq", "time_created", "time_updated", "data"}},
}

// importKey is the kv row OpenCode 2 records its import of 1.x sessions in
// (MIGRATION_STATE_KEY in packages/core/src/database/v1-migration.bun.ts).
const importKey = "migration.v1-v2"

// v2Store reads an OpenCode 2 database: its own tables, and its 1.x tables
// through v1 (nil when it has none). Every Load is one read transaction
// over both.
type v2Store struct {
	info store.Info
	path string
	d    *sqlitedb.DB
	v1   *sqlitedb.V1
	imp  store.Import
	// projects is true when the database has a project table.
	projects bool
}

// open opens an OpenCode 2 database read-only and checks its tables: a
// database without session_v2 and session_message (and their columns) is
// an error wrapping store.ErrNotFound; 1.x tables, when present, must have
// the columns pkg/store/sqlite reads.
func open(path string) (*v2Store, error) {
	var tables map[string]bool
	d, err := sqlitedb.Open(path, func(ctx context.Context, db *sql.DB, path string) error {
		var err error
		if tables, err = sqlitedb.Tables(ctx, db, path); err != nil {
			return err
		}
		for _, t := range v2Columns {
			if !tables[t.table] {
				return fmt.Errorf("%s has no %q table, so it is not an OpenCode 2 database: %w", path, t.table, store.ErrNotFound)
			}
			cols, err := sqlitedb.Names(ctx, db, `SELECT name FROM pragma_table_info(?)`, t.table)
			if err != nil {
				return sqlitedb.Error(path, "read the schema of", err)
			}
			for _, c := range t.columns {
				if !cols[c] {
					return fmt.Errorf("%s: table %q has no column %q, so it is not an OpenCode 2 database sessfix knows: %w", path, t.table, c, store.ErrNotFound)
				}
			}
		}
		if tables["session"] || tables["message"] || tables["part"] {
			return sqlitedb.CheckV1(ctx, db, path, tables)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s := &v2Store{path: d.Path, d: d, projects: tables["project"]}
	ctx := context.Background()
	v1Sessions := 0
	if tables["session"] {
		if err := d.SQL.QueryRowContext(ctx, `SELECT count(*) FROM session`).Scan(&v1Sessions); err != nil {
			d.Close()
			return nil, sqlitedb.Error(s.path, "read", err)
		}
	}
	if tables["kv"] {
		if s.imp, err = readImport(ctx, d.SQL); err != nil {
			d.Close()
			return nil, sqlitedb.Error(s.path, "read", err)
		}
	}
	info := store.Info{Shape: store.ShapeSQLite2, Path: d.Path, Notes: []string{importNote(s.imp, tables["session"], v1Sessions)}}
	if tables["session"] {
		s.v1 = sqlitedb.NewV1(d, info)
		info = s.v1.Info()
	} else {
		info.Notes = append(info.Notes, d.Notes...)
	}
	s.info = info
	return s, nil
}

// readImport reads the import record: {"phase":"sessions","cursor":ID}
// while it runs, {"phase":"completed"} once done.
func readImport(ctx context.Context, db *sql.DB) (store.Import, error) {
	var raw string
	var updated int64
	err := db.QueryRowContext(ctx, `SELECT CAST(value AS TEXT), time_updated FROM kv WHERE key = ?`, importKey).Scan(&raw, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Import{}, nil
	}
	if err != nil {
		return store.Import{}, err
	}
	imp := store.Import{Raw: raw, Updated: time.UnixMilli(updated)}
	switch v := gjson.Parse(raw); v.Get("phase").Str {
	case store.ImportCompleted:
		imp.Phase = store.ImportCompleted
	case store.ImportRunning:
		imp.Phase, imp.Cursor = store.ImportRunning, v.Get("cursor").Str
	}
	return imp, nil
}

// importNote tells the user what kind of store this is and where
// OpenCode 2's import of the 1.x sessions stands.
func importNote(imp store.Import, v1Tables bool, v1Sessions int) string {
	const rw = "sessfix reads its tables and writes none of them"
	switch {
	case imp.Phase == store.ImportCompleted:
		return "an OpenCode 2 database: OpenCode 2 imported its 1.x sessions on " + day(imp.Updated) +
			" and never reads its 1.x tables again; " + rw
	case imp.Phase == store.ImportRunning:
		at := ""
		if imp.Cursor != "" {
			at = " (it reached session " + imp.Cursor + ")"
		}
		return "an OpenCode 2 database whose import of the 1.x sessions has not finished" + at +
			": OpenCode 2 resumes it at its next start; " + rw
	case imp.Raw != "":
		return "an OpenCode 2 database whose import record " + importKey + " is not one sessfix knows (" + imp.Raw + "); " + rw
	case v1Tables && v1Sessions > 0:
		return "an OpenCode 2 database that has not imported its 1.x sessions yet: OpenCode 2 imports them at its next start; " + rw
	}
	return "an OpenCode 2 database without 1.x sessions; " + rw
}

// day renders a time for notes and findings: the UTC day and minute.
func day(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

func (s *v2Store) Info() store.Info { return s.info }

func (s *v2Store) Close() error {
	if s.v1 != nil {
		return s.v1.Close()
	}
	return s.d.Close()
}

func (s *v2Store) dbError(err error) error { return sqlitedb.Error(s.path, "read", err) }

// List returns every session either table holds, once: the 1.x listing
// (session rows and sessions known only from their messages or parts)
// and the session_v2 rows, whose titles win.
func (s *v2Store) List(ctx context.Context) ([]store.SessionRef, error) {
	byID := map[string]*store.SessionRef{}
	var out []store.SessionRef
	if s.v1 != nil {
		refs, err := s.v1.List(ctx)
		if err != nil {
			return nil, err
		}
		out = refs
	}
	rows, err := s.d.SQL.QueryContext(ctx, `SELECT id, title, time_updated FROM session_v2`)
	if err != nil {
		return nil, s.dbError(err)
	}
	defer rows.Close()
	var v2 []store.SessionRef
	for rows.Next() {
		var id string
		var title sql.NullString
		var updated sql.NullInt64
		if err := rows.Scan(&id, &title, &updated); err != nil {
			return nil, s.dbError(err)
		}
		r := store.SessionRef{ID: id, Title: title.String}
		if updated.Valid && updated.Int64 > 0 {
			r.Updated = time.UnixMilli(updated.Int64)
		}
		v2 = append(v2, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.dbError(err)
	}
	for i := range out {
		byID[out[i].ID] = &out[i]
	}
	for _, r := range v2 {
		old, ok := byID[r.ID]
		if !ok {
			out = append(out, r)
			continue
		}
		if r.Title != "" {
			old.Title = r.Title
		}
		if r.Updated.After(old.Updated) {
			old.Updated = r.Updated
		}
	}
	store.SortRefs(out)
	return out, nil
}

// Load reads one session in one read transaction: from OpenCode 2's
// tables with its 1.x copy when session_v2 has it, else from the 1.x
// tables.
func (s *v2Store) Load(ctx context.Context, ref store.SessionRef) (*store.Session, error) {
	tx, err := s.d.SQL.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.dbError(err)
	}
	defer tx.Rollback()
	oc := &store.OpenCode2{Import: s.imp}
	sess := &store.Session{Store: s.info, ID: ref.ID, OpenCode2: oc}
	rows, err := tx.QueryContext(ctx, `SELECT rowid AS "rowid", * FROM session_v2 WHERE id = ?`, ref.ID)
	if err != nil {
		return nil, s.dbError(err)
	}
	err = sqlitedb.SessionRow(rows, s.path, "session_v2", sess)
	rows.Close()
	if err != nil {
		return nil, s.dbError(err)
	}
	if sess.InfoMissing && s.v1 != nil {
		v1, err := s.v1.LoadIn(ctx, tx, ref)
		if err != nil {
			return nil, err
		}
		v1.OpenCode2 = oc
		return v1, nil
	}
	oc.V2 = true
	if err := s.loadMessages(ctx, tx, sess); err != nil {
		return nil, s.dbError(err)
	}
	if sess.Info != nil && s.projects {
		dir, own := sess.Info.Get("directory").Str, sess.Info.Get("project_id").Str
		err := tx.QueryRowContext(ctx, `SELECT id FROM project WHERE worktree = ? AND id != ? ORDER BY id LIMIT 1`, dir, own).Scan(&oc.DirectoryProject)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, s.dbError(err)
		}
	}
	if s.v1 != nil {
		v1, err := s.v1.LoadIn(ctx, tx, ref)
		if err != nil {
			return nil, err
		}
		if !v1.InfoMissing || len(v1.Messages) > 0 || len(v1.Broken) > 0 || len(v1.Orphans) > 0 {
			oc.V1 = v1
		}
	}
	return sess, nil
}

// loadMessages reads the session's session_message rows in seq order,
// each assistant message's content items as its parts.
func (s *v2Store) loadMessages(ctx context.Context, tx *sql.Tx, sess *store.Session) error {
	rows, err := tx.QueryContext(ctx, `SELECT rowid, id, type, time_created, time_updated, data FROM session_message
		WHERE session_id = ? ORDER BY seq, id`, sess.ID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var rowid, created, updated int64
		var id, typ string
		var data sqlitedb.Bytes
		if err := rows.Scan(&rowid, &id, &typ, &created, &updated, &data); err != nil {
			return err
		}
		rec := store.Record{Kind: store.KindMessage, ID: id, Raw: data, Modified: time.UnixMilli(updated),
			Loc: store.Location{Path: s.path, Table: "session_message", RowID: rowid}}
		rec.Check()
		if rec.Err != nil {
			sess.Broken = append(sess.Broken, &rec)
			continue
		}
		m := &store.Message{Record: rec, SessionID: sess.ID, Role: typ, Created: created}
		if content := m.Get("content"); content.IsArray() {
			for _, item := range content.Array() {
				p := store.Record{Kind: store.KindPart, ID: item.Get("id").Str, Raw: []byte(item.Raw), Modified: rec.Modified, Loc: rec.Loc}
				p.Check()
				if p.Err != nil {
					sess.Broken = append(sess.Broken, &p)
					continue
				}
				m.Parts = append(m.Parts, &store.Part{Record: p, MessageID: id, SessionID: sess.ID, Type: item.Get("type").Str})
			}
		}
		sess.Messages = append(sess.Messages, m)
	}
	return rows.Err()
}

// Activity: what is seen of other programs using the database, from its
// locks, as for a 1.x database (sqlitedb.Activity).
func (s *v2Store) Activity() store.Activity { return sqlitedb.Activity(s.path) }

// Health reads the database's health (store.HealthChecker).
func (s *v2Store) Health(ctx context.Context, opts store.HealthOptions) (*store.Health, error) {
	return s.d.Health(ctx, opts)
}
