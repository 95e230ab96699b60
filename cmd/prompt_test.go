package cmd

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// askedWriter is a command's stderr that says when the command asks its
// question.
type askedWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	asked chan struct{}
	once  sync.Once
}

func (w *askedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if strings.Contains(w.buf.String(), "[y/N] ") {
		w.once.Do(func() { close(w.asked) })
	}
	return n, err
}

func (w *askedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestCtrlCAtTheQuestionAnswersNo: every command that asks (fix, drop,
// rewind, fork) is interrupted while it waits for the answer on a terminal
// whose user types nothing. The interruption is delivered as Ctrl-C is,
// through the command's context (its cause a *SignalError, as Main's
// handler sets it), once the question is on stderr: the command stops at
// once without a line being read, exits 130, writes nothing and leaves no
// writer lock.
func TestCtrlCAtTheQuestionAnswersNo(t *testing.T) {
	t.Setenv("SESSFIX_STATE_DIR", t.TempDir())
	b, err := os.ReadFile(broken)
	if err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(t.TempDir(), "broken.json")
	if err := os.WriteFile(probe, b, 0o644); err != nil {
		t.Fatal(err)
	}
	st := storetest.OpenOne(t, probe)
	s := storetest.LoadAll(t, st)[0]
	st.Close()
	first, last := s.Messages[0].ID, s.Messages[len(s.Messages)-1].ID
	for _, args := range [][]string{
		{"fix"},
		{"drop", s.ID, last, "--store"},
		{"rewind", s.ID, "--to", first, "--store"},
		{"fork", s.ID, "--store"},
	} {
		t.Run(args[0], func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "broken.json")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			stdin, typed := io.Pipe() // the user types nothing
			defer typed.Close()
			errOut := &askedWriter{asked: make(chan struct{})}
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			done := make(chan result, 1)
			go func() {
				done <- runCtx(t, ctx, func(_ *cli.Factory, ios *iostreams.IOStreams) {
					ios.In, ios.ErrOut = stdin, errOut
					ios.SetStdinTTY(true)
					ios.SetStdoutTTY(true)
				}, append(args, path)...)
			}()
			select {
			case <-errOut.asked:
			case r := <-done:
				t.Fatalf("%v exited %d without asking:\n%s", args, r.code, errOut.String())
			}
			if _, err := os.Stat(store.LockPath(store.Info{Path: path})); err != nil {
				t.Fatalf("no writer lock while asking (%v): the test asks nothing of the lock's release", err)
			}
			cancel(&SignalError{Signal: os.Interrupt})
			var r result
			select {
			case r = <-done:
			case <-time.After(time.Minute):
				t.Fatalf("%v still waits for an answer a minute after Ctrl-C:\n%s", args, errOut.String())
			}
			if r.code != ExitInterrupted || !strings.Contains(errOut.String(), "nothing written\n") ||
				!strings.HasSuffix(errOut.String(), "sessfix: interrupted\n") {
				t.Errorf("%v: exit %d, stderr:\n%s", args, r.code, errOut.String())
			}
			if _, err := os.Stat(store.LockPath(store.Info{Path: path})); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%v: the writer lock is left (%v)", args, err)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, b) {
				t.Errorf("%v: the store changed", args)
			}
			if forks, _ := filepath.Glob(filepath.Join(dir, "*.fork-*")); len(forks) > 0 {
				t.Errorf("%v: wrote %v", args, forks)
			}
		})
	}
}
