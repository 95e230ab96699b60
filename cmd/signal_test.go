package cmd

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/storegen"
	"github.com/sessfix/sessfix/pkg/store"
)

// stopSignalCases are the signals that stop every command cleanly, with
// the exit code and the last line of stderr each one must give.
var stopSignalCases = []struct {
	sig  syscall.Signal
	code int
	says string
}{
	{syscall.SIGINT, ExitInterrupted, "sessfix: interrupted"},
	{syscall.SIGTERM, ExitTerminated, "sessfix: stopped by SIGTERM"},
	{syscall.SIGHUP, ExitHangup, "sessfix: stopped by SIGHUP"},
}

// sessfixExe returns a path named sessfix that runs this test binary as
// sessfix (TestMain registers the command under that name).
func sessfixExe(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "sessfix")
	if err := os.Symlink(self, link); err != nil {
		t.Fatal(err)
	}
	return link
}

// signalled is one run of a real sessfix process stopped by a signal.
type signalled struct {
	cmd    *exec.Cmd
	stderr lockedBuffer
	done   chan error
}

// lockedBuffer is the stderr a reader goroutine fills while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) WriteString(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.WriteString(s)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startSessfix starts exe with args in dir, its state in dir/state, and
// waits until a line of its stderr contains ready ("" waits for nothing).
func startSessfix(t *testing.T, exe, dir, ready string, args ...string) *signalled {
	t.Helper()
	return startSessfixEnv(t, exe, dir, nil, ready, args...)
}

// startSessfixEnv is startSessfix with env added to the environment.
func startSessfixEnv(t *testing.T, exe, dir string, env []string, ready string, args ...string) *signalled {
	t.Helper()
	p := &signalled{done: make(chan error, 1)}
	p.cmd = exec.Command(exe, args...)
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), "SESSFIX_STATE_DIR="+filepath.Join(dir, "state"), "HOME="+dir, "XDG_DATA_HOME=", "XDG_STATE_HOME=", "NO_COLOR=1")
	p.cmd.Env = append(p.cmd.Env, env...)
	p.cmd.Stdout = io.Discard
	errPipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	seen := make(chan struct{})
	go func(want string) {
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			p.stderr.WriteString(sc.Text() + "\n")
			if want != "" && strings.Contains(sc.Text(), want) {
				close(seen)
				want = ""
			}
		}
		p.done <- p.cmd.Wait()
	}(ready)
	if ready == "" {
		return p
	}
	select {
	case <-seen:
	case err := <-p.done:
		t.Fatalf("%v exited (%v) before saying %q:\n%s", args, err, ready, p.stderr.String())
	case <-time.After(time.Minute):
		p.cmd.Process.Kill()
		t.Fatalf("%v never said %q", args, ready)
	}
	return p
}

// stop sends sig after delay and returns the exit code; finished is true
// when the process had exited before the signal could be sent.
func (p *signalled) stop(t *testing.T, sig syscall.Signal, delay time.Duration) (code int, finished bool) {
	t.Helper()
	var err error
	select {
	case err = <-p.done:
		finished = true
	case <-time.After(delay):
		if sig == 0 {
			t.Fatalf("still running after %s:\n%s", delay, p.stderr.String())
		}
		if serr := p.cmd.Process.Signal(sig); serr != nil {
			t.Fatal(serr)
		}
		select {
		case err = <-p.done:
		case <-time.After(time.Minute):
			p.cmd.Process.Kill()
			t.Fatalf("did not stop on %s:\n%s", sig, p.stderr.String())
		}
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, finished
	case errors.As(err, &ee):
		return ee.ExitCode(), finished
	}
	t.Fatal(err)
	return 0, finished
}

// wait waits for the process to exit and returns its exit code.
func (p *signalled) wait(t *testing.T) int {
	t.Helper()
	code, _ := p.stop(t, 0, time.Hour)
	return code
}

// lastLine is the last line the process wrote on stderr.
func (p *signalled) lastLine() string {
	lines := strings.Split(strings.TrimSpace(p.stderr.String()), "\n")
	return lines[len(lines)-1]
}

// TestSignalsStopWatch stops real `sessfix watch` processes with SIGINT,
// SIGTERM and SIGHUP at random moments (scanning, repairing, idle): every
// round must exit with the signal's code, say so, and leave no lock.
func TestSignalsStopWatch(t *testing.T) {
	t.Parallel()
	exe := sessfixExe(t)
	const rounds = 10
	for _, c := range stopSignalCases {
		for round := 0; round < rounds; round++ {
			dir := t.TempDir()
			path := filepath.Join(dir, "broken.json")
			copyFile(t, broken, path)
			p := startSessfix(t, exe, dir, "watching export store", "watch", "--poll", "20ms", "--settle", "50ms", "broken.json")
			code, finished := p.stop(t, c.sig, time.Duration(rand.IntN(300))*time.Millisecond)
			if finished {
				t.Fatalf("watch exited on its own:\n%s", p.stderr.String())
			}
			if code != c.code || p.lastLine() != c.says {
				t.Errorf("%s, round %d: exit %d, last line %q; want %d, %q\n%s", c.sig, round, code, p.lastLine(), c.code, c.says, p.stderr.String())
			}
			noLock(t, path)
		}
	}
}

// TestSignalsStopFix stops real `sessfix fix --yes` runs over a generated
// database with SIGINT, SIGTERM and SIGHUP, each sent by the process to
// itself right after a numbered step (internal/faultpoint: the first
// session planned, the step halfway through the run and the one before its
// end, while it plans and while it writes). Each must exit with
// the signal's code and say so, release the writer lock, and leave a store
// that scans and a backup journal that undoes. The steps do not depend on
// how fast the machine is.
func TestSignalsStopFix(t *testing.T) {
	t.Parallel()
	exe := sessfixExe(t)
	gen, _, err := storegen.Generate(store.ShapeSQLite, t.TempDir(), storegen.Config{Sessions: 10, DefectRate: 0.1, ToolOutput: 200})
	if err != nil {
		t.Fatal(err)
	}
	steps := fixSteps(t, exe, gen)
	points := []int{1, len(steps) / 2, len(steps) - 1}
	t.Logf("%d steps; signals after steps %v: %q, %q, %q", len(steps), points, steps[points[0]-1], steps[points[1]-1], steps[points[2]-1])
	names := map[syscall.Signal]string{syscall.SIGINT: "INT", syscall.SIGTERM: "TERM", syscall.SIGHUP: "HUP"}
	for _, c := range stopSignalCases {
		for _, n := range points {
			dir := t.TempDir()
			db := filepath.Join(dir, "opencode.db")
			copyFile(t, gen, db)
			env := []string{"SESSFIX_FAULT_AT=" + strconv.Itoa(n), "SESSFIX_FAULT_SIGNAL=" + names[c.sig]}
			p := startSessfixEnv(t, exe, dir, env, "", "fix", "--yes", "opencode.db")
			code := p.wait(t)
			noLock(t, db)
			if code != c.code || p.lastLine() != c.says {
				t.Errorf("%s after step %d (%s): exit %d, last line %q; want %d, %q\n%s", c.sig, n, steps[n-1], code, p.lastLine(), c.code, c.says, p.stderr.String())
			}
			if code := runIn(t, exe, dir, "scan", "opencode.db"); code != ExitOK && code != ExitFindings {
				t.Errorf("%s after step %d: scan after the signal exits %d", c.sig, n, code)
			}
			if strings.Contains(p.stderr.String(), "backup run") || hasRuns(t, dir) {
				if code := runIn(t, exe, dir, "undo", "--last"); code != ExitOK {
					t.Errorf("%s after step %d: undo of the stopped run exits %d", c.sig, n, code)
				}
			}
		}
	}
}

func hasRuns(t *testing.T, dir string) bool {
	t.Helper()
	runs, _ := filepath.Glob(filepath.Join(dir, "state", "backups", "*", "manifest.json"))
	return len(runs) > 0
}

// runIn runs exe with args in dir (state in dir/state) and returns its
// exit code.
func runIn(t *testing.T, exe, dir string, args ...string) int {
	t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SESSFIX_STATE_DIR="+filepath.Join(dir, "state"), "HOME="+dir, "XDG_DATA_HOME=", "XDG_STATE_HOME=", "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ee.ExitCode() > ExitFindings {
			t.Logf("sessfix %v:\n%s", args, out)
		}
		return ee.ExitCode()
	}
	t.Fatal(err)
	return -1
}

func noLock(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(store.LockPath(store.Info{Path: path})); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the writer lock of %s is left behind (%v)", path, err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentFixesNeverRefuseTheirOwnPlan races two real `sessfix fix
// --yes` processes on the same store, round after round. One repairs it;
// the other either finds the store locked (exit 4) or, having taken the
// lock after the first released it, plans afresh and finds nothing left to
// change (exit 0). It never writes a plan made before the other run wrote
// the store, which the writer refuses (exit 3).
func TestConcurrentFixesNeverRefuseTheirOwnPlan(t *testing.T) {
	t.Parallel()
	exe := sessfixExe(t)
	gen, _, err := storegen.Generate(store.ShapeSQLite, t.TempDir(), storegen.Config{Sessions: 2, Messages: 400, DefectRate: 0.02, ToolOutput: 200})
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 24
	codes := map[int]int{}
	for round := 0; round < rounds; round++ {
		dir := t.TempDir()
		db := filepath.Join(dir, "opencode.db")
		copyFile(t, gen, db)
		// The second run starts anywhere within the first one's run, so
		// that across the rounds it plans before, while and after the
		// first one writes.
		a := startSessfix(t, exe, dir, "", "fix", "--yes", "opencode.db")
		time.Sleep(time.Duration(rand.IntN(800)) * time.Millisecond)
		b := startSessfix(t, exe, dir, "", "fix", "--yes", "opencode.db")
		ca, cb := a.wait(t), b.wait(t)
		codes[ca]++
		codes[cb]++
		for _, r := range []struct {
			code int
			p    *signalled
		}{{ca, a}, {cb, b}} {
			if r.code != ExitOK && r.code != ExitLocked {
				t.Errorf("round %d: a fix exits %d, want 0 or 4:\n%s", round, r.code, r.p.stderr.String())
			}
		}
		if ca != ExitOK && cb != ExitOK {
			t.Errorf("round %d: neither fix succeeded (%d, %d)", round, ca, cb)
		}
		if code := runIn(t, exe, dir, "scan", "opencode.db"); code != ExitOK {
			t.Errorf("round %d: the store is not repaired: scan exits %d", round, code)
		}
		noLock(t, db)
	}
	t.Logf("exit codes over %d rounds: %v", rounds, codes)
}
