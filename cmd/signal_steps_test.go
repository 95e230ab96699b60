package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixSteps runs `sessfix fix --yes` over a copy of db to the end and
// returns the steps internal/faultpoint numbers.
func fixSteps(t *testing.T, exe, db string) []string {
	t.Helper()
	dir := t.TempDir()
	copyFile(t, db, filepath.Join(dir, "opencode.db"))
	log := filepath.Join(dir, "steps")
	p := startSessfixEnv(t, exe, dir, []string{"SESSFIX_FAULT_LOG=" + log}, "", "fix", "--yes", "opencode.db")
	if code := p.wait(t); code != ExitOK {
		t.Fatalf("fix exits %d:\n%s", code, p.stderr.String())
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("the run logged no step: %v", err)
	}
	steps := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(steps) < 8 {
		t.Fatalf("only %d steps: the store is too small to test anything", len(steps))
	}
	return steps
}
