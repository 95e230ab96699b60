//go:build unix

package undo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// killCases are rule fixtures fix repairs with every kind of edit
// (updates, added parts, deleted and re-keyed records), materialised
// together into one store (no two share a record id).
var killCases = []string{
	"preflight-blank-text", "preflight-empty-signature", "preflight-final-tool-loop", "preflight-reasoning-after-tool",
	"preflight-thinking-only", "sf101-dropped-empty-text", "sf101-never-sent",
	"sf105-abandoned-tool", "sf105-pending-after-abort", "sf106-synthetic-thinking",
	"sf107-unsigned-thinking", "sf202-invalid-id", "sf204-clock-jump", "sf205-foreign-parts", "sf301-stale",
	"sf302-failed-attempt",
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// sessfixBinary builds sessfix (the module's main package) once, with
// fault injection (internal/faultpoint), into a directory removed when the
// test binary exits.
func sessfixBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sessfix-killed-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "sessfix")
		out, err := exec.Command("go", "build", "-tags", "sessfix_faults", "-o", builtBin, "github.com/sessfix/sessfix").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

// sessfixCmd is the built sessfix with its state in state.
func sessfixCmd(bin, state string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "SESSFIX_STATE_DIR="+state, "NO_COLOR=1", "XDG_DATA_HOME=", "XDG_STATE_HOME=")
	return cmd
}

// copyStore copies a store (a database, or a directory tree) to a new
// path under dir and returns it.
func copyStore(t *testing.T, from, dir string) string {
	t.Helper()
	to := filepath.Join(dir, filepath.Base(from))
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(dst, fi.Mode().Perm())
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, fi.Mode().Perm()); err != nil {
			return err
		}
		return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}

// runDir is where the backups of a killed run are: the newest run folder
// under state, "" when there is none yet.
func runDir(state string) string {
	runs, _ := filepath.Glob(filepath.Join(state, "backups", "2*"))
	if len(runs) == 0 {
		return ""
	}
	return runs[len(runs)-1]
}

// TestUndoOfAKilledFix kills a real `sessfix fix --yes` process (the
// binary built with fault injection, internal/faultpoint) with SIGKILL
// right after one of its write steps, chosen by number, on a database and
// on a storage/ tree. A whole run is logged first to number its steps;
// then 30 steps spread over the run (the first and last included) are each
// killed at. Whatever the run had written, `sessfix undo RUN`, without
// --force, must put the store back exactly (every row and column of every
// table; every file, directory and mode), leaving no lock and none of
// sessfix's temporary files; a kill after a step that wrote the store
// leaves an incomplete run, and one before any backup run leaves the store
// as it was. The kill points do not depend on how fast the machine is;
// random kills at random times are scripts/stress-kill.sh.
func TestUndoOfAKilledFix(t *testing.T) {
	bin := sessfixBinary(t)
	const rounds = 30
	for _, shape := range []store.Shape{store.ShapeSQLite, store.ShapeStorage} {
		t.Run(string(shape), func(t *testing.T) {
			pristine := materialize(t, shape, killCases...)
			before := storetest.State(t, pristine, shape)

			// One whole run first, numbering its write steps.
			full := copyStore(t, pristine, t.TempDir())
			steps := stepsOf(t, bin, full)
			if storetest.State(t, full, shape) == before {
				t.Fatal("fix changed nothing: the test needs a store it repairs")
			}
			onStore := func(step string) bool {
				return strings.HasPrefix(step, "statement ") || strings.HasPrefix(step, "commit ") || strings.Contains(step, full)
			}
			points := killPoints(len(steps), rounds)
			var wrote int
			for _, n := range points {
				step := steps[n-1]
				dir := t.TempDir()
				path, state := copyStore(t, pristine, dir), filepath.Join(dir, "state")
				cmd := sessfixCmd(bin, state, "fix", "--yes", "-q", path)
				cmd.Env = append(cmd.Env, "SESSFIX_FAULT_AT="+strconv.Itoa(n))
				out, err := cmd.CombinedOutput()
				if !killed(err) {
					t.Fatalf("step %d (%s): the run was not killed there: %v\n%s", n, step, err, out)
				}

				run := runDir(state)
				if run == "" {
					if onStore(step) {
						t.Fatalf("step %d (%s) wrote the store, yet no backup run exists", n, step)
					}
					if got := storetest.State(t, path, shape); got != before {
						t.Fatalf("step %d (%s): killed before it began a backup run, yet the store changed", n, step)
					}
					continue
				}
				id := filepath.Base(run)
				if onStore(step) {
					wrote++
					if runs, _ := backup.List(backup.Options{Dir: state}); len(runs) != 1 || runs[0].State != "incomplete" {
						t.Fatalf("step %d (%s) wrote the store: want one incomplete run, have %+v", n, step, runs)
					}
				}
				out, err = sessfixCmd(bin, state, "undo", id).CombinedOutput()
				if err != nil {
					t.Fatalf("step %d (%s): undo %s without --force: %v\n%s\nmanifest:\n%s", n, step, id, err, out, manifest(run))
				}
				if got := storetest.State(t, path, shape); got != before {
					t.Fatalf("step %d (%s): after undo %s the store is not as before:\n%s\nmanifest:\n%s", n, step, id, firstDiff(got, before), manifest(run))
				}
				if left := leftovers(path, shape); len(left) > 0 {
					t.Fatalf("step %d (%s): undo left %v", n, step, left)
				}
			}
			if wrote == 0 {
				t.Fatalf("none of the kill points %v of the %d steps wrote the store", points, len(steps))
			}
			t.Logf("%d write steps; killed after %d of them, %d of which had written the store", len(steps), len(points), wrote)
		})
	}
}

// stepsOf runs `sessfix fix --yes` on path to the end and returns its
// write steps in order (what internal/faultpoint logs).
func stepsOf(t *testing.T, bin, path string) []string {
	t.Helper()
	log := filepath.Join(t.TempDir(), "steps")
	cmd := sessfixCmd(bin, t.TempDir(), "fix", "--yes", "-q", path)
	cmd.Env = append(cmd.Env, "SESSFIX_FAULT_LOG="+log)
	if out, err := cmd.CombinedOutput(); err != nil && !isExit(err, 1) {
		t.Fatalf("fix: %v\n%s", err, out)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("the run logged no write step: %v", err)
	}
	var steps []string
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		n, what, _ := strings.Cut(line, " ")
		if n != strconv.Itoa(i+1) {
			t.Fatalf("step log line %d is %q", i+1, line)
		}
		steps = append(steps, what)
	}
	return steps
}

// killPoints spreads up to rounds step numbers (1-based) over steps, the
// first and the last included.
func killPoints(steps, rounds int) []int {
	if steps <= rounds {
		out := make([]int, steps)
		for i := range out {
			out[i] = i + 1
		}
		return out
	}
	var out []int
	for i := range rounds {
		out = append(out, 1+i*(steps-1)/(rounds-1))
	}
	return out
}

// killed reports whether the process ended by SIGKILL.
func killed(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// leftovers are the lock and temporary files sessfix may leave in a store.
func leftovers(path string, shape store.Shape) []string {
	info := store.Info{Shape: shape, Path: path}
	out := store.Temps(info)
	if _, err := os.Stat(store.LockPath(info)); err == nil {
		out = append(out, store.LockPath(info))
	}
	return out
}

func isExit(err error, code int) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.ExitCode() == code
}

func manifest(run string) string {
	b, _ := os.ReadFile(filepath.Join(run, "manifest.json"))
	return string(b)
}

// firstDiff shows the first lines where two store states differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n  got  %.300s\n  want %.300s", i+1, a, b)
		}
	}
	return "(same lines)"
}
