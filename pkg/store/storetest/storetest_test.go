package storetest

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
)

func fixture() *Fixture {
	return &Fixture{ID: "ses_a", Title: "t", Messages: []Message{
		{Body: json.RawMessage(`{"id":"msg_a","role":"user","time":{"created":5}}`),
			Parts: []Part{{ID: "prt_a", Body: json.RawMessage(`{"type":"text","text":"x"}`)}}},
	}}
}

func TestSQLiteRowsMirrorOpenCode(t *testing.T) {
	path := Materialize(t, store.ShapeSQLite, t.TempDir(), fixture())
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mdata, pdata, msid, pmid string
	var created int64
	if err := db.QueryRow(`SELECT data, session_id, time_created FROM message WHERE id = 'msg_a'`).Scan(&mdata, &msid, &created); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT data, message_id FROM part WHERE id = 'prt_a'`).Scan(&pdata, &pmid); err != nil {
		t.Fatal(err)
	}
	if mdata != `{"role":"user","time":{"created":5}}` || msid != "ses_a" || created != 5 {
		t.Errorf("message row %q %q %d", mdata, msid, created)
	}
	if pdata != `{"type":"text","text":"x"}` || pmid != "msg_a" {
		t.Errorf("part row %q %q", pdata, pmid)
	}
	var indexes []string
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		rows.Scan(&n)
		indexes = append(indexes, n)
	}
	rows.Close()
	for _, want := range []string{"message_session_time_created_id_idx", "part_message_id_id_idx", "part_session_idx"} {
		if !strings.Contains(strings.Join(indexes, " "), want) {
			t.Errorf("index %s missing from %v", want, indexes)
		}
	}
}

func TestJSONFilesArePrettyWithIDs(t *testing.T) {
	path := Materialize(t, store.ShapeStorage, t.TempDir(), fixture())
	b, err := os.ReadFile(filepath.Join(path, "part", "msg_a", "prt_a.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"id\": \"prt_a\",\n  \"sessionID\": \"ses_a\",\n  \"messageID\": \"msg_a\",\n  \"type\": \"text\",\n  \"text\": \"x\"\n}"
	if string(b) != want {
		t.Errorf("part file\n%s\nwant\n%s", b, want)
	}
}

func TestSupports(t *testing.T) {
	bad := fixture()
	bad.Messages[0].Parts[0].Body = json.RawMessage(`{"type":`)
	if err := Supports(store.ShapeExport, bad); err == nil || !strings.Contains(err.Error(), "prt_a") {
		t.Errorf("export of an invalid body: %v", err)
	}
	if err := Supports(store.ShapeSessions, bad); err != nil {
		t.Errorf("sessions shape refuses an invalid body: %v", err)
	}
	if err := Supports(store.ShapeExport, fixture(), fixture()); err == nil {
		t.Error("export of two sessions accepted")
	}
	noID := fixture()
	noID.Messages[0].Body = json.RawMessage(`{"role":"user"}`)
	if err := Supports(store.ShapeSQLite, noID); err == nil {
		t.Error("message without an id accepted")
	}
}

func TestCases(t *testing.T) {
	root := t.TempDir()
	fx := filepath.Join(root, "b-fixture")
	Materialize(t, store.ShapeExport, fx, fixture())
	os.Rename(filepath.Join(fx, "ses_a.json"), filepath.Join(fx, "session.json"))
	os.WriteFile(filepath.Join(fx, "shapes"), []byte("sqlite sessions\n"), 0o644)
	os.WriteFile(filepath.Join(fx, "idle"), []byte("2s\n"), 0o644)
	tree := filepath.Join(root, "a-tree")
	Materialize(t, store.ShapeStorage, tree, fixture())
	os.Rename(filepath.Join(tree, "storage"), filepath.Join(tree, "store"))

	cs := Cases(t, root)
	if len(cs) != 2 || cs[0].Name != "a-tree" || cs[1].Name != "b-fixture" {
		t.Fatalf("cases %+v", cs)
	}
	if c := cs[0]; c.Idle != time.Hour || len(c.Shapes) != 1 || c.Shapes[0] != "" {
		t.Errorf("store tree: idle %v shapes %q, want 1h and the tree as it is", c.Idle, c.Shapes)
	}
	if c := cs[1]; c.Idle != 2*time.Second || len(c.Shapes) != 2 || c.Shapes[0] != store.ShapeSQLite || c.Shapes[1] != store.ShapeSessions {
		t.Errorf("export fixture: idle %v shapes %q", c.Idle, c.Shapes)
	}
	for _, c := range cs {
		for _, shape := range c.Shapes {
			dir := t.TempDir()
			st := c.Open(t, shape, dir)
			if want := shape; want != "" && st.Info().Shape != want {
				t.Errorf("%s opened as %s, want %s", c.Name, st.Info().Shape, want)
			}
			if !strings.HasPrefix(st.Info().Path, dir) {
				t.Errorf("%s opened at %s, not under %s", c.Name, st.Info().Path, dir)
			}
			if s, err := st.Load(context.Background(), store.SessionRef{ID: "ses_a"}); err != nil || s.PartCount() != 1 {
				t.Errorf("%s %s: the fixture session did not load: %v", c.Name, shape, err)
			}
		}
	}
}

// halfBroken lists two sessions and cannot load the second.
type halfBroken struct{ store.Store }

func (halfBroken) Info() store.Info { return store.Info{Shape: store.ShapeSessions, Path: "/half"} }
func (halfBroken) List(context.Context) ([]store.SessionRef, error) {
	return []store.SessionRef{{ID: "ses_a"}, {ID: "ses_b"}}, nil
}
func (halfBroken) Load(_ context.Context, ref store.SessionRef) (*store.Session, error) {
	if ref.ID == "ses_b" {
		return nil, errors.New("unreadable")
	}
	return &store.Session{ID: ref.ID}, nil
}

// fatalRecorder is a testing.TB whose Fatalf records the message and stops
// the goroutine, as the real one does.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}
func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestLoadAll(t *testing.T) {
	st := OpenOne(t, Materialize(t, store.ShapeSQLite, t.TempDir(), fixture(), &Fixture{ID: "ses_b", Title: "b"}))
	if ss := LoadAll(t, st); len(ss) != 2 || ss[0].ID == ss[1].ID {
		t.Fatalf("loaded %d sessions, want both", len(ss))
	}
	rec := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		LoadAll(rec, halfBroken{})
	}()
	<-done
	if !strings.Contains(rec.msg, "ses_b") || !strings.Contains(rec.msg, "unreadable") {
		t.Errorf("a session that cannot load: Fatalf %q, want it named with its error", rec.msg)
	}
}
