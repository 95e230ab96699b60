package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/pkg/report"
	"github.com/sessfix/sessfix/pkg/store"
)

// Exit codes. They are sessfix's interface to scripts and CI, documented in
// docs/exit-codes.md and in `sessfix scan --help`; this is the only place that
// decides them.
const (
	ExitOK          = 0   // clean, or everything fixed
	ExitFindings    = 1   // findings at or above --fail-on remain (or a dry run printed changes)
	ExitUsage       = 2   // bad flag or argument, unknown rule code
	ExitFailure     = 3   // no store, store unreadable or unsupported, cannot write output
	ExitLocked      = 4   // store locked or busy
	ExitHangup      = 129 // SIGHUP: 128 + 1
	ExitInterrupted = 130 // SIGINT: 128 + 2
	ExitTerminated  = 143 // SIGTERM: 128 + 15
)

// ExitCodeDoc documents one exit code.
type ExitCodeDoc struct {
	Code int
	// Meaning says when sessfix exits with the code.
	Meaning string
	// Examples are commands or situations that produce it ("" when none).
	Examples string
}

// ExitCodes is the documentation of every exit code, in order. `sessfix help
// exit-codes` prints it and the table in docs/exit-codes.md must say the same
// (a test compares them).
var ExitCodes = []ExitCodeDoc{
	{ExitOK, "success: the scan is clean (no finding at or above `--fail-on`; suppressed findings never count), or every finding was fixed",
		"`sessfix scan` on healthy sessions; `sessfix rules`"},
	{ExitFindings, "findings remain at or above `--fail-on` (default `warning`), or a dry run printed a diff",
		"`sessfix scan` finding an empty text part"},
	{ExitUsage, "usage error: unknown command or flag, bad or missing flag value, too many arguments, a format the command does not print, unknown rule code or prefix, a rule selection that leaves no rule, invalid config file",
		"`sessfix scan --select SF999`; `sessfix explain NOPE`; `--format xml`; a suppression without a reason"},
	{ExitFailure, "operational failure: no store found, a store or named path unreadable or unsupported (the others are still scanned or fixed), an output file that cannot be written",
		"`sessfix scan /no/such/dir`; `sessfix fix` on an OpenCode 2 database (read only)"},
	{ExitLocked, "the store is locked or busy: OpenCode or another sessfix holds it",
		"`sessfix fix` while OpenCode writes the session"},
	{ExitHangup, "stopped by SIGHUP (the terminal closed); handled like Ctrl-C", ""},
	{ExitInterrupted, "interrupted (Ctrl-C): the command stops, a store it has started writing is finished, the lock is released; a failure of its own is printed after `interrupted, then:`", ""},
	{ExitTerminated, "stopped by SIGTERM (`kill`, `systemctl stop`); handled like Ctrl-C", "`systemctl --user stop sessfix-watch`"},
}

// SignalError is the cause of a command's context when a signal stopped
// it: the command ends as interrupted, with 128 + the signal's number as
// its exit code.
type SignalError struct{ Signal os.Signal }

func (e *SignalError) Error() string {
	if e.Signal == os.Interrupt {
		return "interrupted"
	}
	return "stopped by " + signalName(e.Signal)
}

// Is makes a SignalError a context.Canceled: a stopped command is an
// interrupted one.
func (e *SignalError) Is(target error) bool { return target == context.Canceled }

// code is the exit code of a process stopped by the signal.
func (e *SignalError) code() int {
	switch e.Signal {
	case syscall.SIGHUP:
		return ExitHangup
	case syscall.SIGTERM:
		return ExitTerminated
	}
	return ExitInterrupted
}

func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGTERM:
		return "SIGTERM"
	case os.Interrupt:
		return "SIGINT"
	}
	return s.String()
}

// ExitCode maps a command's error to the process exit code. When an error
// carries several causes the most serious wins: stopped by a signal
// (SignalError: 129, 130 or 143; any other cancellation: 130), locked,
// usage, failure, findings.
func ExitCode(err error) int {
	var flagErr *cli.FlagError
	var sig *SignalError
	var ie *interruptedError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ie) && ie.sig != nil:
		return ie.sig.code()
	case errors.As(err, &sig):
		return sig.code()
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.Is(err, store.ErrLocked):
		return ExitLocked
	case errors.As(err, &flagErr):
		return ExitUsage
	case errors.Is(err, cli.ErrFindings) && onlyFindings(err):
		return ExitFindings
	}
	return ExitFailure
}

// onlyFindings reports whether every cause in err is ErrFindings, so that a
// real failure joined with findings still exits 3.
func onlyFindings(err error) bool {
	return everyCause(err, func(c error) bool { return errors.Is(c, cli.ErrFindings) })
}

// silent reports whether err is nothing but ErrFindings, which is not
// printed (the output shows the findings); a findings error with its own
// message (cli.FindingsErrorf) is.
func silent(err error) bool {
	return everyCause(err, func(c error) bool { return c == cli.ErrFindings })
}

// everyCause reports whether ok holds for every cause in err: the errors
// at the ends of its chains, joined ones included.
func everyCause(err error, ok func(error) bool) bool {
	if err == cli.ErrFindings {
		return ok(err)
	}
	switch e := err.(type) {
	case interface{ Unwrap() []error }:
		for _, c := range e.Unwrap() {
			if !everyCause(c, ok) {
				return false
			}
		}
		return true
	case interface{ Unwrap() error }:
		if c := e.Unwrap(); c != nil {
			return everyCause(c, ok)
		}
	}
	return err != nil && ok(err)
}

// interruptedError is a command's own failure after a signal stopped it.
// The run still ends as stopped (the signal's exit code), but what failed
// and its hints (a repair run to undo, say) are shown rather than hidden
// behind the signal. sig is nil when the context was cancelled otherwise.
type interruptedError struct {
	err error
	sig *SignalError
}

func (e *interruptedError) Error() string {
	what := "interrupted"
	if e.sig != nil {
		what = e.sig.Error()
	}
	return what + ", then: " + e.err.Error()
}
func (e *interruptedError) Unwrap() error        { return e.err }
func (e *interruptedError) Is(target error) bool { return target == context.Canceled }

// PrintError writes err on w as `sessfix: message` plus its `hint:` lines.
// ErrFindings is not printed: the report already shows the findings.
func PrintError(w io.Writer, err error) {
	if err == nil || silent(err) {
		return
	}
	msg := err.Error()
	var ie *interruptedError
	var sig *SignalError
	switch {
	case errors.As(err, &ie):
	case errors.As(err, &sig):
		msg = sig.Error()
	case errors.Is(err, context.Canceled):
		msg = "interrupted"
	}
	// Joined errors (several inputs that failed) are one line each; a
	// line that continues the one before it is indented.
	for _, line := range strings.Split(report.CleanLines(msg), "\n") {
		if line != "" && line[0] != ' ' && line[0] != '\t' {
			line = "sessfix: " + line
		}
		fmt.Fprintln(w, line)
	}
	for _, h := range cli.Hints(err) {
		fmt.Fprintf(w, "hint: %s\n", report.CleanLines(h))
	}
	var flagErr *cli.FlagError
	if errors.As(err, &flagErr) && len(cli.Hints(err)) == 0 {
		fmt.Fprintln(w, "hint: run `sessfix help` or add --help to a command for its usage")
	}
}
