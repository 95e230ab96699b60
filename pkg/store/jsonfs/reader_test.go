package jsonfs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/jsonfs"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

func writeJSON(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func refIDs(t *testing.T, st store.Store) []string {
	t.Helper()
	refs, err := st.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range refs {
		ids = append(ids, r.ID)
	}
	return ids
}

func TestStorageOrphans(t *testing.T) {
	f := storetest.Sample()
	path := storetest.Materialize(t, store.ShapeStorage, t.TempDir(), f...)
	// Messages of a session without a session file.
	writeJSON(t, filepath.Join(path, "message", "ses_nofile", "msg_000000000009000000000000aa.json"), `{"id":"msg_000000000009000000000000aa","sessionID":"ses_nofile","role":"user"}`)
	// A part directory whose message exists nowhere, naming an existing session.
	writeJSON(t, filepath.Join(path, "part", "msg_gone1", "prt_000000000009000000000000aa.json"), `{"id":"prt_000000000009000000000000aa","sessionID":"`+f[0].ID+`","messageID":"msg_gone1","type":"text"}`)
	// ...naming a session that does not exist.
	writeJSON(t, filepath.Join(path, "part", "msg_gone2", "prt_000000000009000000000000bb.json"), `{"id":"prt_000000000009000000000000bb","sessionID":"ses_ghost","messageID":"msg_gone2","type":"text"}`)
	// ...naming no session at all (the only file is damaged).
	writeJSON(t, filepath.Join(path, "part", "msg_gone3", "prt_000000000009000000000000cc.json"), ``)

	st := storetest.OpenOne(t, path)
	if got := strings.Join(refIDs(t, st), " "); got != " "+f[1].ID+" "+f[0].ID+" ses_ghost ses_nofile" {
		t.Fatalf("listed %q", got)
	}
	s := storetest.Load(t, st, f[0].ID)
	if len(s.Orphans) != 1 || s.Orphans[0].ID != "prt_000000000009000000000000aa" || s.Orphans[0].MessageID != "msg_gone1" || s.PartCount() != 4 {
		t.Errorf("session %s: orphans %v parts %d", s.ID, s.Orphans, s.PartCount())
	}
	ghost := storetest.Load(t, st, "ses_ghost")
	if !ghost.InfoMissing || len(ghost.Orphans) != 1 {
		t.Errorf("ses_ghost: %+v", ghost)
	}
	nofile := storetest.Load(t, st, "ses_nofile")
	if !nofile.InfoMissing || len(nofile.Messages) != 1 || nofile.Info != nil {
		t.Errorf("ses_nofile: %+v", nofile)
	}
	none := storetest.Load(t, st, "")
	if !none.InfoMissing || len(none.Broken) != 1 || none.Broken[0].ID != "prt_000000000009000000000000cc" {
		t.Errorf("session-less group: %+v", none)
	}
	// A message file's session is its directory, whatever its body says.
	if m := nofile.Messages[0]; m.SessionID != "ses_nofile" {
		t.Errorf("message session %q", m.SessionID)
	}
	// Load works without List (a fresh store builds its index itself).
	st2 := storetest.OpenOne(t, path)
	if s := storetest.Load(t, st2, f[0].ID); len(s.Orphans) != 1 {
		t.Errorf("load without list: orphans %v", s.Orphans)
	}
	if _, err := st.Load(context.Background(), store.SessionRef{ID: "../x"}); err == nil {
		t.Error("a session id with a path separator was loaded")
	}
}

func TestProjectAndSessionsOrphans(t *testing.T) {
	f := storetest.Sample()[:1]
	for _, shape := range []store.Shape{store.ShapeProject, store.ShapeSessions} {
		t.Run(string(shape), func(t *testing.T) {
			path := storetest.Materialize(t, shape, t.TempDir(), f...)
			orphan := storetest.RecordPath(shape, path, f[0].ID, "msg_gone", "prt_000000000009000000000000aa")
			writeJSON(t, orphan, `{"type":"text"}`)
			st := storetest.OpenOne(t, path)
			s := storetest.Load(t, st, f[0].ID)
			if len(s.Orphans) != 1 || s.Orphans[0].MessageID != "msg_gone" || s.Orphans[0].SessionID != f[0].ID || s.Orphans[0].Loc.Path != orphan {
				t.Errorf("orphans %v", s.Orphans)
			}
			if _, err := st.Load(context.Background(), store.SessionRef{ID: ""}); err == nil {
				t.Error("an empty session id was loaded")
			}
		})
	}
}

func TestSessionsOrderByTimeThenID(t *testing.T) {
	f := storetest.Sample()[1]
	path := storetest.Materialize(t, store.ShapeSessions, t.TempDir(), f)
	dir := filepath.Join(path, f.ID, "messages")
	writeJSON(t, filepath.Join(dir, "msg_000000000000100000000000aa.json"), `{"role":"assistant","time":{"created":1767225800000}}`)
	writeJSON(t, filepath.Join(dir, "msg_000000000009000000000000bb.json"), `{"role":"user","time":{"created":1767225600000}}`)
	s := storetest.Load(t, storetest.OpenOne(t, path), f.ID)
	want := "msg_000000000009000000000000bb msg_0000000000030000000000000c msg_000000000000100000000000aa"
	if got := strings.Join(storetest.MessageIDs(s), " "); got != want {
		t.Errorf("order %s, want %s", got, want)
	}
	// The storage shape keeps id order, as JSON-era OpenCode did.
	sp := storetest.Materialize(t, store.ShapeStorage, t.TempDir(), f)
	writeJSON(t, filepath.Join(sp, "message", f.ID, "msg_000000000000100000000000aa.json"), `{"role":"assistant","time":{"created":1767225800000}}`)
	s = storetest.Load(t, storetest.OpenOne(t, sp), f.ID)
	if got := strings.Join(storetest.MessageIDs(s), " "); got != "msg_000000000000100000000000aa msg_0000000000030000000000000c" {
		t.Errorf("storage order %s", got)
	}
}

// TestPermissionDeniedIsBroken injects the open failure: tests run as root,
// where a chmod 000 file would still be readable.
func TestPermissionDeniedIsBroken(t *testing.T) {
	f := storetest.Sample()[0]
	path := storetest.Materialize(t, store.ShapeSessions, t.TempDir(), f)
	denied := storetest.RecordPath(store.ShapeSessions, path, f.ID, "msg_0000000000020000000000000b", "prt_0000000000020000000000000b")
	st, err := jsonfs.OpenSessionsWithOpener(path, func(name string) (*os.File, error) {
		if name == denied {
			return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrPermission}
		}
		return os.Open(name)
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Load(context.Background(), store.SessionRef{ID: f.ID})
	if err != nil {
		t.Fatal(err)
	}
	var pe *store.ParseError
	if len(s.Broken) != 1 || !errors.As(s.Broken[0].Err, &pe) || pe.Reason != "permission denied" || !strings.Contains(pe.Error(), denied) || s.Broken[0].Loc.Path != denied {
		t.Fatalf("broken %v, want the part reported as permission denied naming %s", s.Broken, denied)
	}
	if s.PartCount() != 3 {
		t.Errorf("readable parts %d, want 3", s.PartCount())
	}
}
