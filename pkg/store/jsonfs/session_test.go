package jsonfs_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/store/storetest"
	"github.com/sessfix/sessfix/pkg/store/writertest"
)

// sessionStoreCase is the session-record contract's case for a JSON shape,
// on a store storetest materialises with one session.
func sessionStoreCase(shape store.Shape) writertest.SessionCase {
	var root string
	return writertest.SessionCase{
		Session: writertest.Ses,
		Open: func(t *testing.T) (store.Store, store.Writer) {
			dir := t.TempDir()
			path := storetest.Materialize(t, shape, dir, &storetest.Fixture{
				ID: writertest.Ses, Info: json.RawMessage(`{"id":"` + writertest.Ses + `","projectID":"global","title":"old title","time":{"created":1767225600000}}`),
				Messages: []storetest.Message{{ID: writertest.MsgA, Body: json.RawMessage(`{"role":"user","time":{"created":1767225601000}}`),
					Parts: []storetest.Part{{ID: writertest.Prt1, Body: json.RawMessage(`{"type":"text","text":"hi"}`)}}}},
			})
			root = dir
			st := storetest.OpenOne(t, path)
			w, err := shapes.OpenWriter(st.Info(), store.WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { w.Close() })
			return st, w
		},
		Snapshot: func(t *testing.T) string { return writertest.DirSnapshot(t, root) },
		Deletes:  true,
		NewBody: func(id string) []byte {
			return []byte("{\n  \"id\": \"" + id + "\",\n  \"projectID\": \"global\",\n  \"title\": \"Forked session\",\n  \"time\": {\n    \"created\": 1795276747368\n  }\n}")
		},
	}
}

func TestJSONWriterSessionContract(t *testing.T) {
	for _, shape := range []store.Shape{store.ShapeStorage, store.ShapeProject, store.ShapeSessions} {
		t.Run(string(shape), func(t *testing.T) {
			writertest.SessionContract(t, sessionStoreCase(shape))
		})
	}
}

// Where each shape keeps a new session's file, spelled out apart from the
// writer; the directories the add made (several levels deep in the
// sessions layout) go with it on undo.
func TestJSONWriterAddsSessionWhereTheShapeKeepsThem(t *testing.T) {
	id := store.NewSessionID(time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC))
	for shape, rel := range map[store.Shape]string{
		store.ShapeStorage:  "storage/session/other-project/" + id + ".json",
		store.ShapeProject:  "project/global/storage/session/info/" + id + ".json",
		store.ShapeSessions: "sessions/" + id + "/session.json",
	} {
		t.Run(string(shape), func(t *testing.T) {
			c := sessionStoreCase(shape)
			st, w := c.Open(t)
			dir := filepath.Dir(filepath.Dir(filepath.Dir(st.Info().Path)))
			if shape != store.ShapeProject {
				dir = filepath.Dir(st.Info().Path)
			}
			before := c.Snapshot(t)
			body := []byte(`{"id":"` + id + `","projectID":"other-project","title":"new"}`)
			// A session with a message and its part, as a fork writes one.
			cs := &store.ChangeSet{Store: st.Info(), SessionID: id, Edits: []store.Edit{
				{Op: store.OpAdd, Kind: store.KindSession, ID: id, After: body},
				{Op: store.OpAdd, Kind: store.KindMessage, ID: writertest.MsgNew, SessionID: id, After: []byte(`{"id":"` + writertest.MsgNew + `","sessionID":"` + id + `","role":"user"}`)},
				{Op: store.OpAdd, Kind: store.KindPart, ID: writertest.PrtNew, SessionID: id, MessageID: writertest.MsgNew, After: []byte(`{"type":"text","text":"hi"}`)},
			}}
			targets, images := writertest.ApplyBackedUp(t, w, cs)
			if sess := writertest.LoadSession(t, st, id); len(sess.Messages) != 1 || len(sess.Messages[0].Parts) != 1 {
				t.Fatalf("the new session reads back with %d messages", len(sess.Messages))
			}
			got, err := os.ReadFile(filepath.Join(dir, rel))
			if err != nil || string(got) != string(body) {
				t.Fatalf("%s holds %q (%v), want the new session", rel, got, err)
			}
			if cs.Edits[0].Loc.Path != filepath.Join(dir, rel) {
				t.Errorf("the add's location is %s, want %s", cs.Edits[0].Loc.Path, rel)
			}
			writertest.ExpectNow(t, w, targets, images)
			if err := w.Restore(context.Background(), images); err != nil {
				t.Fatal(err)
			}
			if after := c.Snapshot(t); after != before {
				t.Fatalf("after the undo:\n%s\nwant:\n%s", after, before)
			}
		})
	}
}

func TestJSONWriterRefusesASessionItCannotPlace(t *testing.T) {
	id := store.NewSessionID(time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC))
	c := sessionStoreCase(store.ShapeStorage)
	st, w := c.Open(t)
	before := c.Snapshot(t)
	for _, body := range []string{
		`{"id":"` + id + `","title":"no project"}`,
		`{"id":"` + id + `","projectID":"../outside"}`,
		`{"id":"` + writertest.Ses + `","projectID":"global"}`,
	} {
		cs := &store.ChangeSet{Store: st.Info(), SessionID: id, Edits: []store.Edit{{Op: store.OpAdd, Kind: store.KindSession, ID: id, After: []byte(body)}}}
		if _, err := w.Targets(context.Background(), cs); err == nil {
			t.Errorf("adding %s was accepted", body)
		}
	}
	// The same id under another project.
	cs := &store.ChangeSet{Store: st.Info(), SessionID: writertest.Ses, Edits: []store.Edit{{Op: store.OpAdd, Kind: store.KindSession, ID: writertest.Ses,
		After: []byte(`{"id":"` + writertest.Ses + `","projectID":"elsewhere"}`)}}}
	if _, err := w.Targets(context.Background(), cs); err == nil || !strings.Contains(err.Error(), "already holds it") {
		t.Errorf("adding a session the store holds under another project = %v", err)
	}
	if after := c.Snapshot(t); after != before {
		t.Fatalf("a refused add changed the store:\n%s\nwant:\n%s", after, before)
	}
}
