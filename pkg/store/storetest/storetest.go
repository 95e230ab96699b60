package storetest

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	_ "modernc.org/sqlite" // database/sql driver "sqlite"
)

// Fixture is one session to write into a store.
type Fixture struct {
	// ID is the session id; empty means the "id" of Info.
	ID string
	// Title is the session title; empty means Info's "title".
	Title string
	// Info is the session record body (optional). Materialize fills in id
	// and title when it lacks them.
	Info json.RawMessage
	// Messages in the order they should load.
	Messages []Message
}

// Message is one message of a fixture.
type Message struct {
	// ID is the message id; empty means the body's "id".
	ID string
	// Body is the message body. A JSON object gets the ids it lacks
	// (JSON shapes and export) or loses them (SQLite data column); anything
	// else is written verbatim.
	Body  json.RawMessage
	Parts []Part
}

// Part is one part of a fixture message.
type Part struct {
	// ID is the part id; empty means the body's "id".
	ID   string
	Body json.RawMessage
}

// ProjectID is the project every materialised session belongs to (the
// storage/ directory level and the SQLite project row), and the slug of the
// project tree in the project shape.
const ProjectID = "global"

// Shapes lists every shape Materialize writes.
var Shapes = []store.Shape{store.ShapeSQLite, store.ShapeStorage, store.ShapeProject, store.ShapeSessions, store.ShapeExport}

func (f *Fixture) sessionID() string {
	if f.ID != "" {
		return f.ID
	}
	return gjson.GetBytes(f.Info, "id").String()
}

func (f *Fixture) title() string {
	if f.Title != "" {
		return f.Title
	}
	return gjson.GetBytes(f.Info, "title").String()
}

func (m *Message) id() string {
	if m.ID != "" {
		return m.ID
	}
	return gjson.GetBytes(m.Body, "id").String()
}

func (p *Part) id() string {
	if p.ID != "" {
		return p.ID
	}
	return gjson.GetBytes(p.Body, "id").String()
}

// Supports reports why the fixtures cannot be written in the shape, or nil
// when they can: every record needs an id, and an export file can hold
// only one session and only valid JSON bodies.
func Supports(shape store.Shape, fixtures ...*Fixture) error {
	if shape == store.ShapeExport && len(fixtures) != 1 {
		return fmt.Errorf("an export file holds exactly one session, not %d", len(fixtures))
	}
	for _, f := range fixtures {
		sid := f.sessionID()
		if sid == "" && shape != store.ShapeExport {
			return errors.New("a fixture session has no id")
		}
		if shape == store.ShapeExport && len(f.Info) > 0 && !gjson.ValidBytes(f.Info) {
			return fmt.Errorf("session %s: an export file cannot hold an invalid info body", sid)
		}
		for i := range f.Messages {
			m := &f.Messages[i]
			if m.id() == "" {
				return fmt.Errorf("session %s: message %d has no id", sid, i)
			}
			if shape == store.ShapeExport && !gjson.ValidBytes(m.Body) {
				return fmt.Errorf("message %s: an export file cannot hold an invalid body", m.id())
			}
			for j := range m.Parts {
				p := &m.Parts[j]
				if p.id() == "" {
					return fmt.Errorf("message %s: part %d has no id", m.id(), j)
				}
				if shape == store.ShapeExport && !gjson.ValidBytes(p.Body) {
					return fmt.Errorf("part %s: an export file cannot hold an invalid body", p.id())
				}
			}
		}
	}
	return nil
}

// Materialize writes the sessions into a new store of the shape under dir
// (which should be empty, e.g. t.TempDir()) and returns the path to open:
//
//	sqlite    dir/opencode.db
//	storage   dir/storage
//	project   dir/project/global/storage
//	sessions  dir/sessions
//	export    dir/<sessionID>.json (exactly one session)
//
// so dir itself is laid out like an OpenCode data dir for the first three.
// It fails the test when the fixtures cannot be written (see Supports).
func Materialize(t testing.TB, shape store.Shape, dir string, sessions ...*Fixture) (path string) {
	t.Helper()
	if err := Supports(shape, sessions...); err != nil {
		t.Fatalf("storetest: cannot materialise into %s: %v", shape, err)
	}
	var err error
	switch shape {
	case store.ShapeSQLite:
		path = filepath.Join(dir, "opencode.db")
		err = writeSQLite(path, sessions)
	case store.ShapeStorage:
		path = filepath.Join(dir, "storage")
		err = writeStorage(path, sessions)
	case store.ShapeProject:
		path = filepath.Join(dir, "project", ProjectID, "storage")
		err = writeProject(path, sessions)
	case store.ShapeSessions:
		path = filepath.Join(dir, "sessions")
		err = writeSessions(path, sessions)
	case store.ShapeExport:
		name := sessions[0].sessionID()
		if name == "" {
			name = "export"
		}
		path = filepath.Join(dir, name+".json")
		err = writeExport(path, sessions[0])
	default:
		t.Fatalf("storetest: unknown shape %q", shape)
	}
	if err != nil {
		t.Fatalf("storetest: materialise %s: %v", shape, err)
	}
	return path
}

// OpenOne opens path with shapes.Open, requires exactly one store, and closes
// it when the test ends.
func OpenOne(t testing.TB, path string) store.Store {
	t.Helper()
	d, err := shapes.Open([]string{path})
	if err != nil {
		t.Fatalf("storetest: open %s: %v", path, err)
	}
	t.Cleanup(func() { d.Close() })
	if len(d.Stores) != 1 {
		t.Fatalf("storetest: %s opened as %d stores, want 1", path, len(d.Stores))
	}
	return d.Stores[0]
}

// LoadAll lists the store's sessions and loads every one, failing the test
// when listing or loading any of them fails.
func LoadAll(t testing.TB, st store.Store) []*store.Session {
	t.Helper()
	ctx := context.Background()
	refs, err := st.List(ctx)
	if err != nil {
		t.Fatalf("storetest: list %s: %v", st.Info().Path, err)
	}
	var out []*store.Session
	for _, ref := range refs {
		s, err := st.Load(ctx, ref)
		if err != nil {
			t.Fatalf("storetest: load %s from %s: %v", ref.ID, st.Info().Path, err)
		}
		out = append(out, s)
	}
	return out
}

// LoadExportFixture reads a fixture written as an `opencode export` file:
// {"info": Session, "messages": [{"info": Message, "parts": [Part...]}]}.
// Ids come from the bodies.
func LoadExportFixture(path string) (*Fixture, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read fixture: %w", err)
	}
	if !gjson.ValidBytes(raw) {
		return nil, fmt.Errorf("fixture %s is not valid JSON", path)
	}
	info := gjson.GetBytes(raw, "info")
	msgs := gjson.GetBytes(raw, "messages")
	if !info.IsObject() || !msgs.IsArray() {
		return nil, fmt.Errorf("fixture %s is not in export format: want an object with \"info\" and \"messages\"", path)
	}
	f := &Fixture{ID: info.Get("id").String(), Title: info.Get("title").String(), Info: json.RawMessage(info.Raw)}
	msgs.ForEach(func(_, m gjson.Result) bool {
		mi := m.Get("info")
		fm := Message{ID: mi.Get("id").String(), Body: json.RawMessage(mi.Raw)}
		m.Get("parts").ForEach(func(_, p gjson.Result) bool {
			fm.Parts = append(fm.Parts, Part{ID: p.Get("id").String(), Body: json.RawMessage(p.Raw)})
			return true
		})
		f.Messages = append(f.Messages, fm)
		return true
	})
	return f, nil
}

// Reopen drops time.completed from the fixture's newest assistant message,
// the way OpenCode leaves it while it streams the next step, and returns
// when that message was created (its time.created).
func (f *Fixture) Reopen() (created time.Time, err error) {
	for i := len(f.Messages) - 1; i >= 0; i-- {
		m := &f.Messages[i]
		if gjson.GetBytes(m.Body, "role").String() != "assistant" {
			continue
		}
		if m.Body, err = sjson.DeleteBytes(m.Body, "time.completed"); err != nil {
			return time.Time{}, err
		}
		return time.UnixMilli(gjson.GetBytes(m.Body, "time.created").Int()), nil
	}
	return time.Time{}, errors.New("the fixture has no assistant message")
}

// kv is one id key and value to put into a body.
type kv struct{ key, val string }

func isObject(body []byte) bool {
	t := bytes.TrimSpace(body)
	return len(t) > 0 && t[0] == '{' && gjson.ValidBytes(t)
}

// withIDs returns body with the id keys it lacks inserted first (OpenCode
// writes ids first), compact. Non-objects come back unchanged.
func withIDs(body []byte, ids ...kv) []byte {
	if !isObject(body) {
		return body
	}
	var c bytes.Buffer
	json.Compact(&c, body)
	out := c.Bytes()
	var head []byte
	for _, id := range ids {
		if gjson.GetBytes(out, id.key).Exists() {
			continue
		}
		k, _ := json.Marshal(id.key)
		v, _ := json.Marshal(id.val)
		head = append(append(append(append(head, k...), ':'), v...), ',')
	}
	if len(head) == 0 {
		return out
	}
	if bytes.Equal(out, []byte("{}")) {
		head = head[:len(head)-1]
	}
	return append(append([]byte{'{'}, head...), out[1:]...)
}

// pretty indents a compact JSON value with 2 spaces, as OpenCode's
// JSON.stringify(x, null, 2); non-JSON comes back unchanged.
func pretty(body []byte) []byte {
	if !gjson.ValidBytes(body) {
		return body
	}
	var b bytes.Buffer
	if err := json.Indent(&b, bytes.TrimSpace(body), "", "  "); err != nil {
		return body
	}
	return b.Bytes()
}

// withoutIDs removes the id keys from an object body (the SQLite data
// column) and compacts it; non-objects come back unchanged.
func withoutIDs(body []byte, keys ...string) []byte {
	if !isObject(body) {
		return body
	}
	var c bytes.Buffer
	json.Compact(&c, body)
	out := c.Bytes()
	for _, k := range keys {
		if gjson.GetBytes(out, k).Exists() {
			out, _ = sjson.DeleteBytes(out, k)
		}
	}
	return out
}

func sessionBody(f *Fixture) []byte {
	info := []byte(f.Info)
	if len(info) == 0 {
		info = []byte("{}")
	}
	if !isObject(info) {
		return info
	}
	out := withIDs(info, kv{"id", f.sessionID()})
	if t := f.title(); t != "" && !gjson.GetBytes(out, "title").Exists() {
		out, _ = sjson.SetBytes(out, "title", t)
	}
	return out
}

func messageBody(f *Fixture, m *Message) []byte {
	return withIDs(m.Body, kv{"id", m.id()}, kv{"sessionID", f.sessionID()})
}

func partBody(f *Fixture, m *Message, p *Part) []byte {
	return withIDs(p.Body, kv{"id", p.id()}, kv{"sessionID", f.sessionID()}, kv{"messageID", m.id()})
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func writeStorage(root string, fs []*Fixture) error {
	for _, f := range fs {
		sid := f.sessionID()
		if err := writeFile(filepath.Join(root, "session", ProjectID, sid+".json"), pretty(sessionBody(f))); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(root, "message", sid), 0o755); err != nil {
			return err
		}
		for i := range f.Messages {
			m := &f.Messages[i]
			if err := writeFile(filepath.Join(root, "message", sid, m.id()+".json"), pretty(messageBody(f, m))); err != nil {
				return err
			}
			for j := range m.Parts {
				p := &m.Parts[j]
				if err := writeFile(filepath.Join(root, "part", m.id(), p.id()+".json"), pretty(partBody(f, m, p))); err != nil {
					return err
				}
			}
		}
	}
	return os.MkdirAll(filepath.Join(root, "part"), 0o755)
}

func writeProject(root string, fs []*Fixture) error {
	base := filepath.Join(root, "session")
	for _, f := range fs {
		sid := f.sessionID()
		if err := writeFile(filepath.Join(base, "info", sid+".json"), pretty(sessionBody(f))); err != nil {
			return err
		}
		for i := range f.Messages {
			m := &f.Messages[i]
			if err := writeFile(filepath.Join(base, "message", sid, m.id()+".json"), pretty(messageBody(f, m))); err != nil {
				return err
			}
			for j := range m.Parts {
				p := &m.Parts[j]
				if err := writeFile(filepath.Join(base, "part", sid, m.id(), p.id()+".json"), pretty(partBody(f, m, p))); err != nil {
					return err
				}
			}
		}
	}
	return os.MkdirAll(filepath.Join(base, "info"), 0o755)
}

func writeSessions(root string, fs []*Fixture) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	for _, f := range fs {
		dir := filepath.Join(root, f.sessionID())
		if err := os.MkdirAll(filepath.Join(dir, "messages"), 0o755); err != nil {
			return err
		}
		if len(f.Info) > 0 || f.Title != "" {
			if err := writeFile(filepath.Join(dir, "session.json"), pretty(sessionBody(f))); err != nil {
				return err
			}
		}
		for i := range f.Messages {
			m := &f.Messages[i]
			if err := writeFile(filepath.Join(dir, "messages", m.id()+".json"), pretty(messageBody(f, m))); err != nil {
				return err
			}
			for j := range m.Parts {
				p := &m.Parts[j]
				if err := writeFile(filepath.Join(dir, "parts", m.id(), p.id()+".json"), pretty(partBody(f, m, p))); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func writeExport(path string, f *Fixture) error {
	var b bytes.Buffer
	b.WriteString(`{"info":`)
	b.Write(sessionBody(f))
	b.WriteString(`,"messages":[`)
	for i := range f.Messages {
		m := &f.Messages[i]
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"info":`)
		b.Write(messageBody(f, m))
		b.WriteString(`,"parts":[`)
		for j := range m.Parts {
			if j > 0 {
				b.WriteByte(',')
			}
			b.Write(partBody(f, m, &m.Parts[j]))
		}
		b.WriteString(`]}`)
	}
	b.WriteString(`]}`)
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return fmt.Errorf("export body is not valid JSON: %w", err)
	}
	return writeFile(path, out.Bytes())
}

// baseTime is the time_created given to records whose body has no time
// (epoch ms, 2026-01-01).
const baseTime = int64(1767225600000)

func writeSQLite(path string, fs []*Fixture) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=busy_timeout(5000)")
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Exec(SchemaV1); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec("INSERT INTO project (id, worktree, vcs, time_created, time_updated, sandboxes) VALUES (?, '/', NULL, ?, ?, '[]')",
		ProjectID, baseTime, baseTime); err != nil {
		return err
	}
	for _, f := range fs {
		sid := f.sessionID()
		info := sessionBody(f)
		created, updated := baseTime, baseTime
		type row struct {
			id, sid string
			created int64
			data    []byte
		}
		var msgs []row
		var parts []struct {
			row
			mid string
		}
		for i := range f.Messages {
			m := &f.Messages[i]
			mc := gjson.GetBytes(m.Body, "time.created").Int()
			if mc == 0 {
				mc = baseTime + int64(i)*1000
			}
			updated = max(updated, mc)
			msgs = append(msgs, row{m.id(), sid, mc, withoutIDs(m.Body, "id", "sessionID")})
			for j := range m.Parts {
				p := &m.Parts[j]
				pc := gjson.GetBytes(p.Body, "time.start").Int()
				if pc == 0 {
					pc = mc
				}
				parts = append(parts, struct {
					row
					mid string
				}{row{p.id(), sid, pc, withoutIDs(p.Body, "id", "sessionID", "messageID")}, m.id()})
			}
		}
		if c := gjson.GetBytes(info, "time.created").Int(); c != 0 {
			created = c
		}
		if u := gjson.GetBytes(info, "time.updated").Int(); u != 0 {
			updated = u
		}
		str := func(key, def string) string {
			if v := gjson.GetBytes(info, key); v.Type == gjson.String {
				return v.Str
			}
			return def
		}
		if _, err := tx.Exec(`INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, time_updated)
			VALUES (?, ?, NULLIF(?, ''), ?, ?, ?, ?, ?, ?)`,
			sid, ProjectID, str("parentID", ""), str("slug", "fixture"), str("directory", "/"), f.title(), str("version", "1.18.33"),
			created, updated); err != nil {
			return fmt.Errorf("session %s: %w", sid, err)
		}
		for _, m := range msgs {
			if _, err := tx.Exec(`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)`,
				m.id, m.sid, m.created, m.created, string(m.data)); err != nil {
				return fmt.Errorf("message %s: %w", m.id, err)
			}
		}
		for _, p := range parts {
			if _, err := tx.Exec(`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)`,
				p.id, p.mid, p.sid, p.created, p.created, string(p.data)); err != nil {
				return fmt.Errorf("part %s: %w", p.id, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	return db.Close()
}
