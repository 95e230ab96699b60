package jsonfs_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// The storage tree's sessions carry the store's project records
// (storage/project/<id>.json), what a missing session record is rebuilt
// under; a record whose id is not its file's name, or that has no string
// worktree, is not one. A session record written after the store listed its
// sessions is read by Load.
func TestStorageProjectsAndLateSessionRecord(t *testing.T) {
	const id = "ses_e0129dd6fffeTpKH3aMlTYHUC9"
	dir := filepath.Join(t.TempDir(), "storage")
	files := map[string]string{
		"project/global.json":     `{"id": "global", "worktree": "/", "time": {"created": 1, "updated": 1}}`,
		"project/abc123.json":     `{"id": "abc123", "worktree": "/home/dev/repo"}`,
		"project/renamed.json":    `{"id": "other", "worktree": "/home/dev/other"}`,
		"project/noworktree.json": `{"id": "noworktree"}`,
		"message/" + id + "/msg_1fed62331001AxgbsJVXNDRK97.json": `{"id": "msg_1fed62331001AxgbsJVXNDRK97", "sessionID": "` + id + `", "role": "user", "time": {"created": 1}}`,
	}
	for rel, body := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st := storetest.OpenOne(t, dir)
	refs, err := st.List(context.Background())
	if err != nil || len(refs) != 1 {
		t.Fatalf("list: %v %v", refs, err)
	}
	s, err := st.Load(context.Background(), refs[0])
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Project{{ID: "abc123", Worktree: "/home/dev/repo"}, {ID: "global", Worktree: "/"}}
	if !reflect.DeepEqual(s.Projects, want) {
		t.Errorf("projects %+v, want %+v", s.Projects, want)
	}
	if !s.InfoMissing {
		t.Fatal("the session has no record yet")
	}
	rec := filepath.Join(dir, "session", "global", id+".json")
	if err := os.MkdirAll(filepath.Dir(rec), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rec, []byte(`{"id": "`+id+`", "projectID": "global", "title": "t", "time": {"created": 1, "updated": 1}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = st.Load(context.Background(), refs[0])
	if err != nil {
		t.Fatal(err)
	}
	if s.InfoMissing || s.Info == nil || s.Title != "t" {
		t.Errorf("after the record is written: missing %v, info %v", s.InfoMissing, s.Info)
	}
}

// A duplicate session record removed after the store listed its sessions
// is no longer reported by Load (the check after a fix that quarantined
// it re-reads the session through the same store).
func TestStorageRemovedDuplicateSessionRecord(t *testing.T) {
	const id = "ses_e0129dd6fffeTpKH3aMlTYHUC9"
	dir := filepath.Join(t.TempDir(), "storage")
	body := `{"id": "` + id + `", "projectID": "global", "title": "t", "time": {"created": 1, "updated": 1}}`
	for _, project := range []string{"global", "zzz"} {
		p := filepath.Join(dir, "session", project, id+".json")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st := storetest.OpenOne(t, dir)
	refs, err := st.List(context.Background())
	if err != nil || len(refs) != 1 {
		t.Fatalf("list: %v %v", refs, err)
	}
	s, err := st.Load(context.Background(), refs[0])
	if err != nil || len(s.Broken) != 1 {
		t.Fatalf("load: %v, broken %d, want the duplicate", err, len(s.Broken))
	}
	if err := os.Remove(filepath.Join(dir, "session", "zzz", id+".json")); err != nil {
		t.Fatal(err)
	}
	if s, err = st.Load(context.Background(), refs[0]); err != nil || len(s.Broken) != 0 || s.Info == nil {
		t.Fatalf("after the duplicate is removed: %v, broken %d, info %v", err, len(s.Broken), s.Info != nil)
	}
}
