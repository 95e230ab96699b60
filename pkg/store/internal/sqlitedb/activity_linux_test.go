package sqlitedb

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
)

// TestActivityOfARelativePath: a store named relatively (sessfix scan data)
// still sees another program that has its database open: the open files
// listed under /proc are absolute, and Activity compares absolute paths.
func TestActivityOfARelativePath(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatalf("sleep(1) holds the file open in this test: %v", err)
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "opencode.db")
	if err := os.WriteFile(db, []byte("SQLite format 3\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// A child holding the database open from its start: no timing involved.
	cmd := exec.Command(sleep, "300")
	cmd.ExtraFiles = []*os.File{f}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	t.Chdir(dir)
	for _, p := range []string{db, "opencode.db", "./opencode.db"} {
		if a := Activity(p); a.State != store.ActivityOpen || a.PID != cmd.Process.Pid {
			t.Errorf("Activity(%q) = %+v, want open by pid %d", p, a, cmd.Process.Pid)
		}
	}
}
