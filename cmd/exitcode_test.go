package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/pkg/store"
)

func TestExitCode(t *testing.T) {
	storeErr := fmt.Errorf("cannot list /s: %w", errors.New("permission denied"))
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, ExitOK},
		{"findings", cli.ErrFindings, ExitFindings},
		{"wrapped findings", fmt.Errorf("scan: %w", cli.ErrFindings), ExitFindings},
		{"usage", cli.FlagErrorf("bad"), ExitUsage},
		{"usage with hints", cli.WithHints(cli.FlagErrorf("bad"), "h"), ExitUsage},
		{"not found", fmt.Errorf("x: %w", store.ErrNotFound), ExitFailure},
		{"unsupported", fmt.Errorf("x: %w", store.ErrUnsupported), ExitFailure},
		{"damaged database", fmt.Errorf("fix: %w", &store.DamagedError{Path: "/d/opencode.db", Check: "quick_check"}), ExitFailure},
		{"anything else", storeErr, ExitFailure},
		{"failure beats findings", errors.Join(cli.ErrFindings, storeErr), ExitFailure},
		{"locked", fmt.Errorf("x: %w", store.ErrLocked), ExitLocked},
		{"locked beats usage", errors.Join(cli.FlagErrorf("bad"), store.ErrLocked), ExitLocked},
		{"interrupted", context.Canceled, ExitInterrupted},
		{"interrupted beats locked", errors.Join(store.ErrLocked, context.Canceled), ExitInterrupted},
		{"SIGINT", &SignalError{os.Interrupt}, ExitInterrupted},
		{"SIGTERM", &SignalError{syscall.SIGTERM}, ExitTerminated},
		{"SIGHUP", &SignalError{syscall.SIGHUP}, ExitHangup},
		{"SIGTERM beats locked", errors.Join(store.ErrLocked, &SignalError{syscall.SIGTERM}), ExitTerminated},
		{"failure after SIGTERM", &interruptedError{err: storeErr, sig: &SignalError{syscall.SIGTERM}}, ExitTerminated},
	}
	for _, tt := range tests {
		if got := ExitCode(tt.err); got != tt.want {
			t.Errorf("%s: ExitCode = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestPrintError(t *testing.T) {
	var buf bytes.Buffer
	PrintError(&buf, cli.ErrFindings)
	if buf.Len() != 0 {
		t.Errorf("findings printed as an error: %q", buf.String())
	}
	PrintError(&buf, cli.WithHints(fmt.Errorf("no opencode store found at /x: %w", store.ErrNotFound), "pass a path", "or another"))
	want := "sessfix: no opencode store found at /x: no opencode store found\nhint: pass a path\nhint: or another\n"
	if buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
	buf.Reset()
	PrintError(&buf, fmt.Errorf("scan: %w", context.Canceled))
	if buf.String() != "sessfix: interrupted\n" {
		t.Errorf("got %q", buf.String())
	}
	// A failure of its own after Ctrl-C keeps its message and hints.
	buf.Reset()
	failed := &interruptedError{err: cli.WithHints(errors.New("session ses_1: rollback failed"), "undo the run with `sessfix undo r1`")}
	PrintError(&buf, failed)
	if want := "sessfix: interrupted, then: session ses_1: rollback failed\nhint: undo the run with `sessfix undo r1`\n"; buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
	if ExitCode(failed) != ExitInterrupted {
		t.Errorf("exit code %d, want %d", ExitCode(failed), ExitInterrupted)
	}
}

func TestRunKeepsAFailureAfterCtrlC(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// A path that does not exist fails on its own, whatever the context.
	r := runCtx(t, ctx, nil, "scan", filepath.Join(t.TempDir(), "missing"))
	if r.code != ExitInterrupted || !strings.Contains(r.stderr, "interrupted, then: ") || !strings.Contains(r.stderr, "missing") {
		t.Errorf("exit %d, stderr %q: want 130 and the failure after the interrupt", r.code, r.stderr)
	}
}
