//go:build unix

package undo

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

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

// sessfixBinary builds sessfix (the module's main package) once, into a
// directory removed when the test binary exits.
func sessfixBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sessfix-killed-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "sessfix")
		out, err := exec.Command("go", "build", "-o", builtBin, "github.com/sessfix/sessfix").CombinedOutput()
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

// TestUndoOfAKilledFix kills a real `sessfix fix --yes` process (the built
// binary) with SIGKILL at random points of its run, many times, on a
// database and on a storage/ tree. Whatever the run had written, `sessfix
// undo RUN`, without --force, must put the store back exactly (every row
// and column of every table; every file, directory and mode), leaving no
// lock and none of sessfix's temporary files; a run that wrote nothing
// leaves the store as it was.
func TestUndoOfAKilledFix(t *testing.T) {
	bin := sessfixBinary(t)
	const rounds = 30
	for _, shape := range []store.Shape{store.ShapeSQLite, store.ShapeStorage} {
		t.Run(string(shape), func(t *testing.T) {
			pristine := materialize(t, shape, killCases...)
			before := storetest.State(t, pristine, shape)
			rng := rand.New(rand.NewPCG(uint64(len(shape)), 42))

			// One whole run first: how long it takes, when it starts
			// writing, and that it does write.
			full := copyStore(t, pristine, t.TempDir())
			state := t.TempDir()
			cmd := sessfixCmd(bin, state, "fix", "--yes", "-q", full)
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			start := time.Now()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var begun time.Duration
		calibrate:
			for {
				select {
				case err := <-done:
					if err != nil && !isExit(err, 1) {
						t.Fatalf("fix: %v\n%s", err, out.String())
					}
					break calibrate
				default:
				}
				if begun == 0 && runDir(state) != "" {
					begun = time.Since(start)
				}
				time.Sleep(200 * time.Microsecond)
			}
			total := time.Since(start)
			writing := max(total-begun, time.Millisecond)
			if begun == 0 || storetest.State(t, full, shape) == before {
				t.Fatal("fix changed nothing: the test needs a store it repairs")
			}

			var incomplete, temps, untouched int
			for round := range rounds {
				dir := t.TempDir()
				path, state := copyStore(t, pristine, dir), filepath.Join(dir, "state")
				cmd := sessfixCmd(bin, state, "fix", "--yes", "-q", path)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				// Most kills land once the run has begun writing, at a
				// random point of its writes; some anywhere in the run.
				window := total
				if round%4 != 0 {
					for deadline := time.Now().Add(total * 4); runDir(state) == "" && time.Now().Before(deadline); {
						time.Sleep(200 * time.Microsecond)
					}
					window = writing
				}
				time.Sleep(time.Duration(rng.Int64N(int64(window))))
				_ = cmd.Process.Kill()
				<-done

				run := runDir(state)
				if run == "" {
					untouched++
					if got := storetest.State(t, path, shape); got != before {
						t.Fatalf("round %d: killed before it began a backup run, yet the store changed", round)
					}
					continue
				}
				id := filepath.Base(run)
				if runs, _ := backup.List(backup.Options{Dir: state}); len(runs) == 1 && runs[0].State == "incomplete" {
					incomplete++
				}
				if len(store.Temps(store.Info{Shape: shape, Path: path})) > 0 {
					temps++
				}
				out, err := sessfixCmd(bin, state, "undo", id).CombinedOutput()
				if err != nil {
					t.Fatalf("round %d: undo %s without --force: %v\n%s\nmanifest:\n%s", round, id, err, out, manifest(run))
				}
				if got := storetest.State(t, path, shape); got != before {
					t.Fatalf("round %d: after undo %s the store is not as before:\n%s\nmanifest:\n%s", round, id, firstDiff(got, before), manifest(run))
				}
				if left := leftovers(path, shape); len(left) > 0 {
					t.Fatalf("round %d: undo left %v", round, left)
				}
			}
			t.Logf("%d rounds: %d killed mid-run (incomplete), %d left temporary files, %d before any backup run", rounds, incomplete, temps, untouched)
			if incomplete < 3 {
				t.Errorf("only %d of %d kills left an incomplete run: the kills missed the writes", incomplete, rounds)
			}
		})
	}
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
