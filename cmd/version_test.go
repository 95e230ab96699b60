package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessfix/sessfix/pkg/backup"
)

// TestBackupsRecordTheBuildVersion: a repair's backup manifest (and the
// writer lock, which records the same store.Version) says which sessfix
// wrote it: the version `sessfix version` prints, not the module's.
func TestBackupsRecordTheBuildVersion(t *testing.T) {
	t.Setenv("SESSFIX_STATE_DIR", t.TempDir())
	raw, err := os.ReadFile(broken)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "broken.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, nil, "fix", "--yes", path); r.code != ExitOK && r.code != ExitFindings {
		t.Fatalf("fix exited %d:\n%s", r.code, r.stderr)
	}
	runs, err := backup.List(backup.Options{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v (%v), want the one run of the repair", runs, err)
	}
	b, err := os.ReadFile(filepath.Join(runs[0].Dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m backup.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Version != "1.0.0-test" {
		t.Errorf("the manifest records sessfix %q, want the build's 1.0.0-test", m.Version)
	}
}
