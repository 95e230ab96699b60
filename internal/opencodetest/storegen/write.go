package storegen

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"

	_ "modernc.org/sqlite" // database/sql driver "sqlite"
)

// writer writes generated sessions into one store.
type writer interface {
	// write stores one session and returns the bytes of its record bodies.
	write(s *Session) (int64, error)
	// concurrent reports whether write may be called from several
	// goroutines at once.
	concurrent() bool
	close() error
}

// projectID is the project every generated session belongs to.
const projectID = storetest.ProjectID

func newWriter(shape store.Shape, dir string, cfg Config) (writer, string, error) {
	var path string
	switch shape {
	case store.ShapeSQLite:
		path = filepath.Join(dir, "opencode.db")
	case store.ShapeStorage:
		path = filepath.Join(dir, "storage")
	case store.ShapeProject:
		path = filepath.Join(dir, "project", projectID, "storage")
	case store.ShapeSessions:
		path = filepath.Join(dir, "sessions")
	case store.ShapeExport:
		if cfg.Sessions != 1 {
			return nil, "", fmt.Errorf("an export file holds exactly one session, not %d: generate it with 1 session", cfg.Sessions)
		}
		path = filepath.Join(dir, cfg.Session(0).ID+".json")
	default:
		return nil, "", fmt.Errorf("unknown shape %q (want sqlite, storage, project, sessions or export)", shape)
	}
	if _, err := os.Lstat(path); err == nil {
		return nil, "", fmt.Errorf("%s already exists: generate into a new directory", path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, "", err
	}
	if shape == store.ShapeSQLite {
		w, err := newSQLiteWriter(path)
		return w, path, err
	}
	if shape == store.ShapeExport {
		return &exportWriter{path: path}, path, nil
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, "", err
	}
	return &jsonWriter{shape: shape, root: path}, path, nil
}

// withIDs returns a compact body with the id keys inserted first, as
// OpenCode's JSON shapes store them.
func withIDs(body []byte, kv ...string) []byte {
	out := make([]byte, 0, len(body)+len(kv)*24)
	out = append(out, '{')
	for i := 0; i < len(kv); i += 2 {
		out = fmt.Appendf(out, "%q:%q,", kv[i], kv[i+1])
	}
	return append(out, body[1:]...)
}

// pretty indents a compact body like JSON.stringify(x, null, 2).
func pretty(body []byte) []byte {
	var b bytes.Buffer
	b.Grow(len(body) + len(body)/4)
	if err := json.Indent(&b, body, "", "  "); err != nil {
		return body
	}
	return b.Bytes()
}

// truncate cuts a body in half, as an interrupted write leaves it.
func truncate(body []byte) []byte { return body[:len(body)/2] }

type sessionTime struct {
	Created int64 `json:"created"`
	Updated int64 `json:"updated"`
}

type sessionInfo struct {
	ID        string      `json:"id"`
	Slug      string      `json:"slug"`
	Version   string      `json:"version"`
	ProjectID string      `json:"projectID"`
	Directory string      `json:"directory"`
	Title     string      `json:"title"`
	Time      sessionTime `json:"time"`
}

// sessionBody is the session record of the JSON shapes.
func sessionBody(s *Session) []byte {
	return marshal(sessionInfo{ID: s.ID, Slug: "generated", Version: "1.1.65", ProjectID: projectID,
		Directory: projectDir, Title: s.Title, Time: sessionTime{s.Created, s.Updated}})
}

// jsonWriter writes the storage, project and sessions layouts, one file per
// record, pretty-printed with ids first.
type jsonWriter struct {
	shape store.Shape
	root  string
}

func (w *jsonWriter) paths(s *Session) (info string, msg, part func(mid, pid string) string) {
	switch w.shape {
	case store.ShapeStorage:
		return filepath.Join(w.root, "session", projectID, s.ID+".json"),
			func(mid, _ string) string { return filepath.Join(w.root, "message", s.ID, mid+".json") },
			func(mid, pid string) string { return filepath.Join(w.root, "part", mid, pid+".json") }
	case store.ShapeProject:
		base := filepath.Join(w.root, "session")
		return filepath.Join(base, "info", s.ID+".json"),
			func(mid, _ string) string { return filepath.Join(base, "message", s.ID, mid+".json") },
			func(mid, pid string) string { return filepath.Join(base, "part", s.ID, mid, pid+".json") }
	default:
		dir := filepath.Join(w.root, s.ID)
		return filepath.Join(dir, "session.json"),
			func(mid, _ string) string { return filepath.Join(dir, "messages", mid+".json") },
			func(mid, pid string) string { return filepath.Join(dir, "parts", mid, pid+".json") }
	}
}

// file writes one record, creating its directory once (made holds the
// directories of the session being written).
func file(made map[string]bool, path string, data []byte) (int64, error) {
	if dir := filepath.Dir(path); !made[dir] {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return 0, err
		}
		made[dir] = true
	}
	return int64(len(data)), os.WriteFile(path, data, 0o644)
}

func (w *jsonWriter) write(s *Session) (int64, error) {
	info, msgPath, partPath := w.paths(s)
	made := map[string]bool{}
	total, err := file(made, info, pretty(sessionBody(s)))
	if err != nil {
		return 0, err
	}
	for _, m := range s.Messages {
		n, err := file(made, msgPath(m.ID, ""), pretty(withIDs(m.Body, "id", m.ID, "sessionID", s.ID)))
		if err != nil {
			return 0, err
		}
		total += n
		for _, p := range m.Parts {
			body := pretty(withIDs(p.Body, "id", p.ID, "sessionID", s.ID, "messageID", m.ID))
			if p.Truncated {
				body = truncate(body)
			}
			n, err := file(made, partPath(m.ID, p.ID), body)
			if err != nil {
				return 0, err
			}
			total += n
		}
	}
	return total, nil
}

func (w *jsonWriter) concurrent() bool { return true }
func (w *jsonWriter) close() error     { return nil }

// exportWriter writes one session as an `opencode export` file.
type exportWriter struct {
	path string
}

func (w *exportWriter) write(s *Session) (int64, error) {
	var b bytes.Buffer
	b.WriteString(`{"info":`)
	b.Write(sessionBody(s))
	b.WriteString(`,"messages":[`)
	for i, m := range s.Messages {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"info":`)
		b.Write(withIDs(m.Body, "id", m.ID, "sessionID", s.ID))
		b.WriteString(`,"parts":[`)
		for j, p := range m.Parts {
			if j > 0 {
				b.WriteByte(',')
			}
			body := withIDs(p.Body, "id", p.ID, "sessionID", s.ID, "messageID", m.ID)
			if p.Truncated {
				// An export file is one JSON document: a part cut in half
				// would make the whole file unreadable, so the defect
				// becomes a part without its type instead.
				body = withIDs([]byte(`{"truncated":true}`), "id", p.ID, "sessionID", s.ID, "messageID", m.ID)
			}
			b.Write(body)
		}
		b.WriteString(`]}`)
	}
	b.WriteString(`]}`)
	out := pretty(b.Bytes())
	if err := os.MkdirAll(filepath.Dir(w.path), 0o755); err != nil {
		return 0, err
	}
	return int64(len(out)), os.WriteFile(w.path, out, 0o644)
}

func (w *exportWriter) concurrent() bool { return false }
func (w *exportWriter) close() error     { return nil }

// sqliteWriter writes the v1 tables of an OpenCode 1.2+ database, one
// transaction per session, bodies in the data columns without ids.
type sqliteWriter struct {
	db                              *sql.DB
	sessionSQL, messageSQL, partSQL string
}

func newSQLiteWriter(path string) (*sqliteWriter, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(storetest.SchemaV1); err != nil {
		db.Close()
		return nil, fmt.Errorf("create schema: %w", err)
	}
	if _, err := db.Exec(`INSERT INTO project (id, worktree, vcs, time_created, time_updated, sandboxes) VALUES (?, ?, 'git', 0, 0, '[]')`,
		projectID, projectDir); err != nil {
		db.Close()
		return nil, err
	}
	return &sqliteWriter{db: db,
		sessionSQL: `INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated)
			VALUES (?, ?, 'generated', ?, ?, '1.18.33', ?, ?)`,
		messageSQL: `INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)`,
		partSQL:    `INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)`,
	}, nil
}

func (w *sqliteWriter) write(s *Session) (int64, error) {
	tx, err := w.db.Begin()
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	ins := func(q string, args ...any) error {
		_, err := tx.Exec(q, args...)
		return err
	}
	if err := ins(w.sessionSQL, s.ID, projectID, projectDir, s.Title, s.Created, s.Updated); err != nil {
		return 0, err
	}
	msg, err := tx.Prepare(w.messageSQL)
	if err != nil {
		return 0, err
	}
	defer msg.Close()
	part, err := tx.Prepare(w.partSQL)
	if err != nil {
		return 0, err
	}
	defer part.Close()
	var total int64
	for _, m := range s.Messages {
		if _, err := msg.Exec(m.ID, s.ID, m.Created, m.Created, string(m.Body)); err != nil {
			return 0, fmt.Errorf("message %s: %w", m.ID, err)
		}
		total += int64(len(m.Body))
		for _, p := range m.Parts {
			body := p.Body
			if p.Truncated {
				body = truncate(body)
			}
			if _, err := part.Exec(p.ID, m.ID, s.ID, p.Created, p.Created, string(body)); err != nil {
				return 0, fmt.Errorf("part %s: %w", p.ID, err)
			}
			total += int64(len(body))
		}
	}
	return total, tx.Commit()
}

func (w *sqliteWriter) concurrent() bool { return false }

func (w *sqliteWriter) close() error {
	if _, err := w.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		w.db.Close()
		return err
	}
	return w.db.Close()
}
