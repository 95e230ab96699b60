package holders

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// childEnv makes the test binary a lock holder: it opens the file named by
// the variable, takes a shared POSIX lock on byte 128 and an exclusive one
// on bytes 120-121 (as a SQLite connection writing a WAL database does),
// says "locked" and waits for stdin to close.
const childEnv = "HOLDERS_TEST_CHILD"

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		os.Exit(child(path))
	}
	os.Exit(m.Run())
}

func child(path string) int {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, l := range []unix.Flock_t{{Type: unix.F_RDLCK, Start: 128, Len: 1}, {Type: unix.F_WRLCK, Start: 120, Len: 2}} {
		if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &l); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	fmt.Println("locked")
	bufio.NewReader(os.Stdin).ReadString('\n')
	return 0
}

// startHolder runs the child under another command name (another sessfix
// is left out by name) and waits until it holds its locks.
func startHolder(t *testing.T, path string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "lockholder")
	if err := os.Symlink(self, exe); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	if line, _ := bufio.NewReader(out).ReadString('\n'); strings.TrimSpace(line) != "locked" {
		t.Fatalf("the holder said %q", line)
	}
	return cmd
}

func TestLocksAndOpenSeeAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	path, other := filepath.Join(dir, "db-shm"), filepath.Join(dir, "other")
	for _, p := range []string{path, other} {
		if err := os.WriteFile(p, make([]byte, 256), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if locks, ok := Locks(path); !ok || len(locks) != 0 {
		t.Fatalf("before the holder: %v, %v", locks, ok)
	}
	pid := startHolder(t, path).Process.Pid

	locks, ok := Locks(path, other)
	if !ok {
		t.Fatal("Locks cannot tell on Linux")
	}
	want := map[string]bool{"read 128-128": false, "write 120-121": false}
	for _, l := range locks {
		if l.File != path || l.PID != pid {
			t.Errorf("lock %+v, want one of pid %d on %s", l, pid, path)
		}
		kind := "read"
		if l.Write {
			kind = "write"
		}
		want[fmt.Sprintf("%s %d-%d", kind, l.Start, l.End)] = true
	}
	for k, seen := range want {
		if !seen {
			t.Errorf("the %s lock is not reported: %+v", k, locks)
		}
	}

	procs, ok := Open(func(p string) bool { return p == path })
	if !ok || len(procs) != 1 || procs[0].PID != pid || procs[0].Command != "lockholder" {
		t.Errorf("Open: %+v, %v; want pid %d running lockholder", procs, ok, pid)
	}
	if procs, _ := Open(func(p string) bool { return p == other }); len(procs) != 0 {
		t.Errorf("a file nobody has open: %+v", procs)
	}
}

// TestOwnLocksAreNotReported: this process's own lock and open file are
// not another program's.
func TestOwnLocksAreNotReported(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &unix.Flock_t{Type: unix.F_WRLCK, Start: 0, Len: 1}); err != nil {
		t.Fatal(err)
	}
	if locks, ok := Locks(path); !ok || len(locks) != 0 {
		t.Errorf("own lock reported: %+v, %v", locks, ok)
	}
	if procs, ok := Open(func(p string) bool { return p == path }); !ok || len(procs) != 0 {
		t.Errorf("own open file reported: %+v, %v", procs, ok)
	}
}

func TestParseLock(t *testing.T) {
	for _, tt := range []struct {
		line string
		want Lock
		key  string
	}{
		{"1: POSIX  ADVISORY  READ 25530 fe:00:10519050 1073741826 1073742335", Lock{PID: 25530, Start: 1073741826, End: 1073742335}, "fe:00:10519050"},
		{"2: -> FLOCK  ADVISORY  WRITE 4242 08:01:123 0 EOF", Lock{PID: 4242, Write: true, End: -1}, "08:01:123"},
		{"3: OFDLCK ADVISORY  WRITE -1 00:2d:789 120 120", Lock{PID: -1, Write: true, Start: 120, End: 120}, "00:2d:789"},
	} {
		got, key, ok := parseLock(tt.line)
		if !ok || got != tt.want || key != tt.key {
			t.Errorf("%q: %+v %q %v", tt.line, got, key, ok)
		}
	}
	if _, _, ok := parseLock("garbage"); ok {
		t.Error("garbage parsed")
	}
}
