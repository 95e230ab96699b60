package jsonfs

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
)

// TestActivityOfARelativePath: a storage/ tree named relatively (sessfix
// scan storage) still sees OpenCode's open log in its data dir: the open
// files listed under /proc are absolute, and so is the data dir compared.
func TestActivityOfARelativePath(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatalf("sleep(1) holds the log open in this test: %v", err)
	}
	data := t.TempDir()
	if err := os.MkdirAll(filepath.Join(data, "log"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(data, "log", "2026-11-27T170000.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// A child holding the log open from its start, as OpenCode does.
	cmd := exec.Command(sleep, "300")
	cmd.ExtraFiles = []*os.File{f}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	t.Chdir(data)
	for _, home := range []string{data, ".", "../" + filepath.Base(data)} {
		if a := activity(home); a.State != store.ActivityOpen || a.PID != cmd.Process.Pid {
			t.Errorf("activity(%q) = %+v, want open by pid %d", home, a, cmd.Process.Pid)
		}
	}
}
