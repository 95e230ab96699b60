package watch_test

// End-to-end tests: they build sessfix, start `sessfix watch` on a store and
// change the store from a second process (this test binary re-executed as a
// writer, see helper.go's runHelper), the way OpenCode does.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/watch"
)

var bin string

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode, os.Args[len(os.Args)-4:]))
	}
	dir, err := os.MkdirTemp("", "sessfix-watch-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "sessfix")
	build := exec.Command("go", "build", "-o", bin, "github.com/sessfix/sessfix")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "cannot build sessfix:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// received is an event with the moment the test read it.
type received struct {
	watch.Event
	At time.Time
}

// watchProc is a running `sessfix watch --format json --verbose`.
type watchProc struct {
	t      testing.TB
	cmd    *exec.Cmd
	state  string
	stderr bytes.Buffer
	mu     sync.Mutex
	events []received
	lines  []string
	cond   *sync.Cond
	done   chan struct{}
	exit   error
}

func sessfixEnv(state, home string) []string {
	return append(os.Environ(), "SESSFIX_STATE_DIR="+state, "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"), "NO_COLOR=1")
}

func startWatch(t testing.TB, state string, args ...string) *watchProc {
	t.Helper()
	home := t.TempDir()
	p := &watchProc{t: t, state: state, done: make(chan struct{})}
	p.cond = sync.NewCond(&p.mu)
	p.cmd = exec.Command(bin, append([]string{"watch", "--format", "json", "--verbose"}, args...)...)
	p.cmd.Env = sessfixEnv(state, home)
	p.cmd.Stderr = &p.stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var e watch.Event
			line := sc.Text()
			err := json.Unmarshal([]byte(line), &e)
			p.mu.Lock()
			p.lines = append(p.lines, line)
			if err == nil {
				p.events = append(p.events, received{e, time.Now()})
			}
			p.cond.Broadcast()
			p.mu.Unlock()
		}
		p.exit = p.cmd.Wait()
		p.mu.Lock()
		close(p.done)
		p.cond.Broadcast()
		p.mu.Unlock()
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() || testing.Verbose() {
			p.mu.Lock()
			t.Logf("watch output:\n%s\nstderr:\n%s", strings.Join(p.lines, "\n"), p.stderr.String())
			p.mu.Unlock()
		}
	})
	p.wait(func(e received) bool { return e.Kind == watch.Started }, time.Minute, "started")
	return p
}

// wait returns the first event matching pred, waiting at most limit (a
// deadline for a hung test, not a measurement).
func (p *watchProc) wait(pred func(received) bool, limit time.Duration, what string) received {
	p.t.Helper()
	deadline := time.Now().Add(limit)
	timer := time.AfterFunc(limit, func() { p.mu.Lock(); p.cond.Broadcast(); p.mu.Unlock() })
	defer timer.Stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		for _, e := range p.events {
			if pred(e) {
				return e
			}
		}
		select {
		case <-p.done:
			p.t.Fatalf("watch exited (%v) before %s", p.exit, what)
		default:
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("no %s event from watch", what)
		}
		p.cond.Wait()
	}
}

func (p *watchProc) all(kind watch.Kind, session string) []received {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []received
	for _, e := range p.events {
		if e.Kind == kind && (session == "" || e.Session == session) {
			out = append(out, e)
		}
	}
	return out
}

// stop sends sig and waits for watch to exit. It returns nil when watch
// exits as documented for the signal (128 + its number), else the reason.
func (p *watchProc) stop(sig syscall.Signal) error {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		p.t.Fatal("watch did not stop on " + sig.String())
	}
	var ee *exec.ExitError
	if errors.As(p.exit, &ee) && ee.ExitCode() == 128+int(sig) {
		return nil
	}
	return fmt.Errorf("exit %v, want exit status %d", p.exit, 128+int(sig))
}

func sessfix(t *testing.T, state string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(context.Background(), bin, args...)
	cmd.Env = sessfixEnv(state, t.TempDir())
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// runWriter runs this test binary as the writer process and returns the
// time of its last write and the longest pause between two of its writes.
func runWriter(t *testing.T, mode string, args ...string) (last time.Time, maxGap time.Duration) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$"}, args...)...)
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("writer %s: %v\n%s", mode, err, stderr.String())
	}
	var ns, gap int64
	if _, err := fmt.Sscanf(strings.TrimSpace(string(out)), "last-write %d max-gap %d", &ns, &gap); err != nil {
		t.Fatalf("writer said %q: %v", out, err)
	}
	return time.Unix(0, ns), time.Duration(gap)
}
