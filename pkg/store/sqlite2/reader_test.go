package sqlite2_test

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/sqlite2"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// fixture copies testdata/opencode2/<name>/opencode.db into a temporary
// directory and returns the copy's path.
func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "opencode2", name, "opencode.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "opencode.db")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func open(t *testing.T, path string) store.Store {
	t.Helper()
	st, err := sqlite2.Shape{}.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func load(t *testing.T, st store.Store, id string) *store.Session {
	t.Helper()
	s, err := st.Load(context.Background(), store.SessionRef{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func roles(s *store.Session) []string {
	var out []string
	for _, m := range s.Messages {
		out = append(out, m.Role)
	}
	return out
}

func ids(refs []store.SessionRef) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.ID)
	}
	return out
}

// The import fixture: imported sessions are read from OpenCode 2's tables
// with their 1.x copy; the sessions 1.x wrote after the import only from
// the 1.x tables; each knows where the import stands.
func TestReadsImportedAndLaterSessions(t *testing.T) {
	path := fixture(t, "after-import")
	st := open(t, path)
	if info := st.Info(); info.Shape != store.ShapeSQLite2 || info.Path != path || len(info.Notes) != 1 ||
		!strings.Contains(info.Notes[0], "imported its 1.x sessions on 2026-11-22 16:00 UTC") {
		t.Errorf("info %+v", info)
	}
	refs, err := st.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ses_df6a72717ffeAfterImport2Ua", "ses_df6dde7bfffeAfterImport1Kt", "ses_e012a6510ffemP4Gukdz1ZnYpe", "ses_e012a9fbfffeKtIFkrDCzeMk55", "ses_e012acd97ffeUavLGQWWTi4jHW"}
	if got := ids(refs); !slices.Equal(got, want) {
		t.Fatalf("listed %v, want %v", got, want)
	}

	loop := load(t, st, "ses_e012a9fbfffeKtIFkrDCzeMk55")
	oc := loop.OpenCode2
	if oc == nil || !oc.V2 || oc.V1 == nil || oc.Import.Phase != store.ImportCompleted || !oc.Import.Updated.Equal(time.UnixMilli(1795363200000)) {
		t.Fatalf("imported session: %+v", oc)
	}
	if got := roles(loop); !slices.Equal(got, []string{"user", "assistant", "assistant", "system"}) {
		t.Errorf("OpenCode 2 messages %v", got)
	}
	if loop.Info == nil || loop.Info.Loc.Table != "session_v2" || loop.Info.Get("project_id").Str != "global" {
		t.Errorf("session record %+v", loop.Info)
	}
	for _, m := range loop.Messages {
		if m.Loc.Table != "session_message" || m.Loc.Path != path || m.Get("type").Exists() {
			t.Errorf("message %s at %v, body %s", m.ID, m.Loc, m.Raw)
		}
	}
	var types []string
	for _, p := range loop.Messages[1].Parts {
		types = append(types, p.Type)
		if p.Loc != loop.Messages[1].Loc || p.MessageID != loop.Messages[1].ID {
			t.Errorf("content item %+v not located at its message", p)
		}
	}
	if !slices.Contains(types, "tool") || !slices.Contains(types, "reasoning") {
		t.Errorf("first assistant message's content items %v", types)
	}
	if v1 := oc.V1; v1.OpenCode2 != nil || v1.Info.Loc.Table != "session" || len(v1.Messages) != 3 || v1.Messages[0].Role != "user" || v1.Messages[0].Loc.Table != "message" {
		t.Errorf("1.x copy %+v", v1)
	}

	later := load(t, st, "ses_df6dde7bfffeAfterImport1Kt")
	if oc := later.OpenCode2; oc == nil || oc.V2 || oc.V1 != nil || oc.Import.Phase != store.ImportCompleted {
		t.Fatalf("later session: %+v", oc)
	}
	if len(later.Messages) != 3 || later.Info.Loc.Table != "session" || later.Messages[0].Parts[0].Loc.Table != "part" {
		t.Errorf("later session read as %+v", later)
	}
}

// A database OpenCode 2 made: every message type in seq order, content
// items as parts, no 1.x tables.
func TestReadsNativeSessions(t *testing.T) {
	st := open(t, fixture(t, "native"))
	if notes := st.Info().Notes; len(notes) != 1 || !strings.Contains(notes[0], "without 1.x sessions") {
		t.Errorf("notes %q", notes)
	}
	refs, err := st.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 3 || refs[0].Title != "What is this project?" {
		t.Fatalf("listed %+v", refs)
	}
	main := load(t, st, "ses_dfffa0000000NativeMain0001")
	want := []string{"user", "agent-switched", "system", "assistant", "shell", "synthetic", "model-switched", "assistant", "compaction", "idle", "user", "assistant"}
	if got := roles(main); !slices.Equal(got, want) {
		t.Fatalf("messages %v, want %v", got, want)
	}
	a := main.Messages[3]
	var items []string
	for _, p := range a.Parts {
		items = append(items, p.Type+":"+p.ID)
	}
	if want := []string{"reasoning:rs_1", "text:tx_1", "tool:toolu_01NativeShell0001", "tool:toolu_01NativeRead00001"}; !slices.Equal(items, want) {
		t.Errorf("content %v, want %v", items, want)
	}
	if a.Parts[2].Get("state.status").Str != "completed" || a.Created != 1795400001500 {
		t.Errorf("tool item %s, created %d", a.Parts[2].Raw, a.Created)
	}
	if oc := main.OpenCode2; oc == nil || !oc.V2 || oc.V1 != nil || oc.Import.Phase != "" || oc.DirectoryProject != "" {
		t.Errorf("native session: %+v", oc)
	}
}

// The project OpenCode 2 resolved a session's directory to, when it is not
// the session's own.
func TestDirectoryProject(t *testing.T) {
	path := fixture(t, "native")
	storetest.ExecSQL(t, path, `INSERT INTO project (id, worktree, time_created, time_updated, time_active, sandboxes)
		VALUES ('0d1a2b', '/home/user', 1, 1, 1, '[]')`)
	st := open(t, path)
	if got := load(t, st, "ses_dfffa0002000NativeGlobal01").OpenCode2.DirectoryProject; got != "0d1a2b" {
		t.Errorf("global session's directory project %q", got)
	}
	if got := load(t, st, "ses_dfffa0000000NativeMain0001").OpenCode2.DirectoryProject; got != "" {
		t.Errorf("the main session's own project counted as another: %q", got)
	}
}

// Rows and items that are not JSON objects are Broken, never dropped.
func TestUnreadableRowsAreBroken(t *testing.T) {
	path := fixture(t, "native")
	storetest.ExecSQL(t, path,
		`UPDATE session_message SET data = '{"text": "cut' WHERE id = 'msg_20a4b0003000NativeSystem01'`,
		`UPDATE session_message SET data = json_set(data, '$.content[1]', 'not an item') WHERE id = 'msg_20a4b0004000NativeAsst0001'`)
	s := load(t, open(t, path), "ses_dfffa0000000NativeMain0001")
	if len(s.Messages) != 11 || len(s.Broken) != 2 {
		t.Fatalf("%d messages, broken %v", len(s.Messages), s.Broken)
	}
	if b := s.Broken[0]; b.Kind != store.KindMessage || b.ID != "msg_20a4b0003000NativeSystem01" || b.Err == nil || b.Loc.Table != "session_message" {
		t.Errorf("broken row %+v", b)
	}
	if b := s.Broken[1]; b.Kind != store.KindPart || b.Err == nil || len(s.Messages[2].Parts) != 3 {
		t.Errorf("broken item %+v", b)
	}
}

// Reading changes no byte of the database.
func TestReadingWritesNothing(t *testing.T) {
	for _, name := range []string{"after-import", "rejected-rows", "native"} {
		path := fixture(t, name)
		before := sum(t, path)
		st := open(t, path)
		refs, err := st.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range refs {
			load(t, st, r.ID)
		}
		st.Close()
		if sum(t, path) != before {
			t.Errorf("%s: reading changed the database", name)
		}
		if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
			t.Errorf("%s: reading left files next to the database: %v", name, ents)
		}
	}
}

func sum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}
