package shapes_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

const (
	corruptSession = "ses_7ffffffffff0cccccccccccccc"
	okMsg          = "msg_0000000000010000000000000a"
	noRoleMsg      = "msg_0000000000020000000000000b"
	truncMsg       = "msg_0000000000030000000000000c"
)

// corruptFixture holds one readable message with damaged parts, and two
// damaged messages (each with a readable part).
func corruptFixture() *storetest.Fixture {
	return &storetest.Fixture{
		ID:    corruptSession,
		Title: "damaged",
		Messages: []storetest.Message{
			{ID: okMsg, Body: json.RawMessage(`{"role":"assistant","time":{"created":1}}`), Parts: []storetest.Part{
				{ID: "prt_0000000000010000000000000a", Body: json.RawMessage(``)},
				{ID: "prt_0000000000010000000000000b", Body: json.RawMessage("\x00\x00\x00\x00")},
				{ID: "prt_0000000000010000000000000c", Body: json.RawMessage(`[1,2]`)},
				{ID: "prt_0000000000010000000000000d", Body: json.RawMessage(`{"text":"no type"}`)},
				{ID: "prt_0000000000010000000000000e", Body: json.RawMessage(`{"type":"text","text":"fine"}`)},
			}},
			{ID: noRoleMsg, Body: json.RawMessage(`{"time":{"created":2}}`), Parts: []storetest.Part{
				{ID: "prt_0000000000020000000000000a", Body: json.RawMessage(`{"type":"text","text":"kept"}`)},
			}},
			{ID: truncMsg, Body: json.RawMessage(`{"role":"user","time":{"crea`)},
		},
	}
}

func brokenByID(s *store.Session) map[string]*store.Record {
	out := map[string]*store.Record{}
	for _, b := range s.Broken {
		out[b.ID] = b
	}
	return out
}

func reason(r *store.Record) string {
	var pe *store.ParseError
	if errors.As(r.Err, &pe) {
		return pe.Reason
	}
	return ""
}

func TestCorruptRecordsAreBroken(t *testing.T) {
	want := map[string]struct {
		kind   store.Kind
		reason string
	}{
		"prt_0000000000010000000000000a": {store.KindPart, "empty file"},
		"prt_0000000000010000000000000b": {store.KindPart, "NUL-filled"},
		"prt_0000000000010000000000000c": {store.KindPart, "not an object"},
		"prt_0000000000010000000000000d": {store.KindPart, "missing type"},
		noRoleMsg:                        {store.KindMessage, "missing role"},
		truncMsg:                         {store.KindMessage, "truncated JSON"},
	}
	for _, shape := range []store.Shape{store.ShapeStorage, store.ShapeProject, store.ShapeSessions, store.ShapeSQLite} {
		t.Run(string(shape), func(t *testing.T) {
			path := storetest.Materialize(t, shape, t.TempDir(), corruptFixture())
			st := storetest.OpenOne(t, path)
			s, err := st.Load(context.Background(), store.SessionRef{ID: corruptSession})
			if err != nil {
				t.Fatal(err)
			}
			got := brokenByID(s)
			if len(got) != len(want) {
				t.Errorf("broken records %d, want %d", len(got), len(want))
			}
			for id, w := range want {
				b := got[id]
				if b == nil {
					t.Errorf("%s is not reported broken", id)
					continue
				}
				if b.Kind != w.kind || reason(b) != w.reason {
					t.Errorf("%s: %s %q (%v), want %s %q", id, b.Kind, reason(b), b.Err, w.kind, w.reason)
				}
				if shape == store.ShapeSQLite {
					if b.Loc.Path != path || b.Loc.RowID == 0 {
						t.Errorf("%s: location %v does not name the row", id, b.Loc)
					}
				} else if filepath.Base(b.Loc.Path) != id+".json" {
					t.Errorf("%s: location %v does not name the file", id, b.Loc)
				}
			}
			if len(s.Messages) != 1 || s.Messages[0].ID != okMsg || len(s.Messages[0].Parts) != 1 {
				t.Fatalf("readable messages %v", s.Messages)
			}
			// The part of the message without a role is still reported.
			if len(s.Orphans) != 1 || s.Orphans[0].ID != "prt_0000000000020000000000000a" || s.Orphans[0].MessageID != noRoleMsg {
				t.Errorf("orphans %v, want the part of %s", s.Orphans, noRoleMsg)
			}
		})
	}
}

// TestFilesystemDamage covers what only a directory tree can hold: a
// symlink out of the store, a directory named like a record, a dangling
// link, and temp files that must be ignored.
func TestFilesystemDamage(t *testing.T) {
	for _, shape := range []store.Shape{store.ShapeStorage, store.ShapeProject, store.ShapeSessions} {
		t.Run(string(shape), func(t *testing.T) {
			f := storetest.Sample()[0]
			path := storetest.Materialize(t, shape, t.TempDir(), f)
			mid := idOf(f.Messages[1].Body)
			partDir := filepath.Dir(storetest.RecordPath(shape, path, f.ID, mid, "x"))
			msgDir := filepath.Dir(storetest.RecordPath(shape, path, f.ID, mid, ""))

			outside := filepath.Join(t.TempDir(), "secret.json")
			if err := os.WriteFile(outside, []byte(`{"type":"text","text":"secret"}`), 0o644); err != nil {
				t.Fatal(err)
			}
			must(t, os.Symlink(outside, filepath.Join(partDir, "prt_0000000000020000000000000x.json")))
			must(t, os.Mkdir(filepath.Join(partDir, "prt_0000000000020000000000000y.json"), 0o755))
			must(t, os.Symlink(filepath.Join(partDir, "gone"), filepath.Join(partDir, "prt_0000000000020000000000000z.json")))
			// A symlink inside the store is followed.
			inside := filepath.Join(partDir, "prt_0000000000020000000000000d.json")
			must(t, os.Symlink(filepath.Join(partDir, "prt_0000000000020000000000000c.json"), inside))
			// Temp files are not records.
			must(t, os.WriteFile(filepath.Join(partDir, ".prt_0000000000020000000000000e.json.tmp"), nil, 0o644))
			must(t, os.WriteFile(filepath.Join(partDir, "prt_0000000000020000000000000f.json.tmp-123"), nil, 0o644))
			must(t, os.WriteFile(filepath.Join(msgDir, "notes.txt"), []byte("x"), 0o644))

			st := storetest.OpenOne(t, path)
			s, err := st.Load(context.Background(), store.SessionRef{ID: f.ID})
			if err != nil {
				t.Fatal(err)
			}
			got := brokenByID(s)
			if len(got) != 3 {
				t.Errorf("broken %d records, want 3: %v", len(got), s.Broken)
			}
			check := func(id, reason string, detail ...string) {
				t.Helper()
				b := got[id]
				if b == nil {
					t.Errorf("%s not broken", id)
					return
				}
				msg := b.Err.Error()
				if b.Kind != store.KindPart || !strings.HasPrefix(msg, reason) {
					t.Errorf("%s: %s %q, want part %q", id, b.Kind, msg, reason)
				}
				for _, d := range detail {
					if !strings.Contains(msg, d) {
						t.Errorf("%s: %q does not name %s", id, msg, d)
					}
				}
			}
			real, _ := filepath.EvalSymlinks(outside)
			check("prt_0000000000020000000000000x", "symlink out of the store", real)
			check("prt_0000000000020000000000000y", "is a directory", "prt_0000000000020000000000000y.json")
			check("prt_0000000000020000000000000z", "dangling symlink")
			m := s.Message(mid)
			if m == nil {
				t.Fatalf("message %s not loaded", mid)
			}
			var ids []string
			for _, p := range m.Parts {
				ids = append(ids, p.ID)
			}
			if len(ids) != 4 || ids[3] != "prt_0000000000020000000000000d" {
				t.Fatalf("message %s parts %v, want the three parts plus the in-store symlink", mid, ids)
			}
			for _, p := range m.Parts {
				if strings.Contains(string(p.Raw), "secret") {
					t.Error("a symlink out of the store was read")
				}
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
