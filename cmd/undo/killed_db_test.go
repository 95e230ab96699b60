//go:build unix

package undo

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/store"
)

// TestKilledSalvage kills a real `sessfix fix --yes` (the binary built
// with fault injection) with SIGKILL after each write step of its salvage
// of a damaged copy of the recorded 1.18.33 database (one part leaf page
// overwritten). After each kill, on one copy, `sessfix undo RUN` without
// --force puts the damaged bytes back exactly; on another, the next
// `sessfix fix --yes` finishes or puts back what the killed run left and
// ends with a database that passes integrity_check. Neither leaves a
// temporary file beside the database.
func TestKilledSalvage(t *testing.T) {
	bin := sessfixBinary(t)
	rs := realstore.Copy(t, ocrelease.V1_18)
	rs.DamagePage(t, "part")
	pristine, err := os.ReadFile(rs.Path)
	if err != nil {
		t.Fatal(err)
	}
	fresh := func() (string, string) {
		dir := t.TempDir()
		path := filepath.Join(dir, "opencode.db")
		if err := os.WriteFile(path, pristine, 0o644); err != nil {
			t.Fatal(err)
		}
		return path, filepath.Join(dir, "state")
	}
	full, _ := fresh()
	steps := stepsOf(t, bin, full)
	var swap bool
	for _, s := range steps {
		swap = swap || s == "database swapped"
	}
	if !swap {
		t.Fatalf("a whole run never swapped the database in: steps %q", steps)
	}
	for n := 1; n <= len(steps); n++ {
		step := steps[n-1]
		for _, next := range []string{"undo", "fix"} {
			path, state := fresh()
			cmd := sessfixCmd(bin, state, "fix", "--yes", "-q", path)
			cmd.Env = append(cmd.Env, "SESSFIX_FAULT_AT="+strconv.Itoa(n))
			if out, err := cmd.CombinedOutput(); !killed(err) {
				t.Fatalf("step %d (%s): the run was not killed there: %v\n%s", n, step, err, out)
			}
			run := runDir(state)
			switch {
			case next == "undo" && run == "":
				if b, _ := os.ReadFile(path); !bytes.Equal(b, pristine) {
					t.Fatalf("step %d (%s): killed before its backup run, yet the database changed", n, step)
				}
				continue // the killed run's lock is the next writer's to take over
			case next == "undo":
				if out, err := sessfixCmd(bin, state, "undo", filepath.Base(run)).CombinedOutput(); err != nil {
					t.Fatalf("step %d (%s): undo without --force: %v\n%s\nmanifest:\n%s", n, step, err, out, manifest(run))
				}
				if b, _ := os.ReadFile(path); !bytes.Equal(b, pristine) {
					t.Fatalf("step %d (%s): undo did not put the damaged bytes back\nmanifest:\n%s", n, step, manifest(run))
				}
			default:
				if out, err := sessfixCmd(bin, state, "fix", "--yes", "-q", "--select", "SF5", path).CombinedOutput(); err != nil {
					t.Fatalf("step %d (%s): the next fix: %v\n%s", n, step, err, out)
				}
				if got := integrity(t, path); got != "ok" {
					t.Fatalf("step %d (%s): after the next fix integrity_check says %s", n, step, got)
				}
			}
			if left := leftovers(path, store.ShapeSQLite); len(left) > 0 {
				t.Fatalf("step %d (%s), then %s: left %v", n, step, next, left)
			}
			ents, _ := os.ReadDir(filepath.Dir(path))
			for _, e := range ents {
				if strings.Contains(e.Name(), "sessfix") {
					t.Fatalf("step %d (%s), then %s: left %s", n, step, next, e.Name())
				}
			}
		}
	}
	t.Logf("%d write steps, each killed at: %q", len(steps), steps)
}

func integrity(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var s string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&s); err != nil {
		return err.Error()
	}
	return s
}
