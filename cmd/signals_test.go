package cmd

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
)

// TestSecondSignalLeavesNoLock: the first signal cancels the command's
// context with its *SignalError; a second one, while the command still
// holds writer locks (finishing a write, or stuck), ends the process at
// once with that signal's exit code, and releases every lock first. The
// signals are sent on the channel Main's handler reads; exit records the
// code instead of ending the test.
func TestSecondSignalLeavesNoLock(t *testing.T) {
	for _, c := range stopSignalCases {
		t.Run(c.sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			var locks []*store.Lock
			for _, name := range []string{"a.db", "b.json"} {
				l, err := store.AcquireLock(store.Info{Shape: store.ShapeSQLite, Path: filepath.Join(dir, name)})
				if err != nil {
					t.Fatal(err)
				}
				locks = append(locks, l)
			}
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			sigs := make(chan os.Signal, 2)
			done := make(chan struct{})
			exited := make(chan int, 1)
			var errOut bytes.Buffer
			returned := make(chan struct{})
			go func() {
				watchSignals(sigs, cancel, done, &errOut, func(code int) { exited <- code })
				close(returned)
			}()

			sigs <- syscall.SIGINT
			<-ctx.Done()
			var sig *SignalError
			if !errors.As(context.Cause(ctx), &sig) || sig.Signal != os.Interrupt {
				t.Fatalf("first signal: cause %v", context.Cause(ctx))
			}
			for _, l := range locks {
				if _, err := os.Stat(l.Path()); err != nil {
					t.Fatalf("the first signal released %s (%v): the command releases its own", l.Path(), err)
				}
			}

			sigs <- c.sig
			<-returned
			if code := <-exited; code != c.code {
				t.Errorf("second %s: exit %d, want %d", c.sig, code, c.code)
			}
			for _, name := range []string{"a.db", "b.json"} {
				p := store.LockPath(store.Info{Path: filepath.Join(dir, name)})
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("second %s: %s is left (%v)", c.sig, p, err)
				}
			}
			if !strings.Contains(errOut.String(), "again, stopped at once") || !strings.Contains(errOut.String(), "2 writer locks released between two changes") {
				t.Errorf("stderr:\n%s", errOut.String())
			}
			// The command's own release, later, finds nothing to do.
			for _, l := range locks {
				if err := l.Release(); err != nil {
					t.Errorf("release after the second signal: %v", err)
				}
			}
		})
	}
}

// TestSecondSignalMidChangeKeepsTheLock: a second signal while a store
// is being changed (store.Writing) ends the process at once but removes
// no lock, so no other sessfix starts on a half-written store, and stderr
// says the change was cut and how to put it back.
func TestSecondSignalMidChangeKeepsTheLock(t *testing.T) {
	l, err := store.AcquireLock(store.Info{Path: filepath.Join(t.TempDir(), "b.json")})
	if err != nil {
		t.Fatal(err)
	}
	path := l.Path()
	defer l.Release()
	done := store.Writing()
	defer done()
	_, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 2)
	exited := make(chan int, 1)
	var errOut bytes.Buffer
	sigs <- syscall.SIGINT
	sigs <- syscall.SIGINT
	watchSignals(sigs, cancel, make(chan struct{}), &errOut, func(code int) { exited <- code })
	if code := <-exited; code != ExitInterrupted {
		t.Errorf("exit %d, want %d", code, ExitInterrupted)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the lock of the store being changed was removed (%v)", err)
	}
	want := "hint: it stopped in the middle of a change: `sessfix undo --last` puts back what this run wrote; its writer lock (" +
		path + ") stays until this sessfix has ended, then the next sessfix replaces it\n"
	if !strings.HasSuffix(errOut.String(), want) {
		t.Errorf("stderr:\n%s\nwant it to end with:\n%s", errOut.String(), want)
	}
}

// TestSignalWatchEndsWithTheCommand: once the command has returned, the
// handler stops and no signal ends the process.
func TestSignalWatchEndsWithTheCommand(t *testing.T) {
	done := make(chan struct{})
	returned := make(chan struct{})
	go func() {
		watchSignals(make(chan os.Signal), func(error) {}, done, &bytes.Buffer{}, func(int) { t.Error("exit called") })
		close(returned)
	}()
	close(done)
	<-returned
}
