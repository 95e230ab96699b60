package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sessfix/sessfix/cmd/internal/iostreams"
)

// AskLine asks a yes/no question on ios.ErrOut and reads the answer from
// ios.In: only "y" or "yes" is yes; end of input is no. When ctx ends
// first (Ctrl-C at the question) the answer is no, at once, and the error
// is ctx's cause: a command never waits for Enter while it holds a
// store's writer lock, and the line then typed is kept for the next
// question (ios.ReadLine).
func AskLine(ctx context.Context, ios *iostreams.IOStreams, q string) (bool, error) {
	fmt.Fprintf(ios.ErrOut, "%s [y/N] ", q)
	line, err := ios.ReadLine(ctx)
	if ctx.Err() != nil && err == context.Cause(ctx) {
		fmt.Fprintln(ios.ErrOut) // the next line starts on its own
		return false, err
	}
	if err != nil && line == "" {
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, err
	}
	line = strings.ToLower(strings.TrimSpace(line))
	return line == "y" || line == "yes", nil
}

// WriteMode is how a command that writes decides to.
type WriteMode int

// Write modes.
const (
	WriteDry        WriteMode = iota // --dry-run: never
	WriteNoTerminal                  // no --yes and no terminal to ask on: never
	WriteAsk                         // ask on the terminal
	WriteYes                         // --yes: always
)

// Writes reports whether the mode may write, so the command takes the
// stores' writer locks before it plans.
func (m WriteMode) Writes() bool { return m == WriteAsk || m == WriteYes }

// DecideWrite decides, before planning, whether a run may write: it asks
// when p can prompt.
func DecideWrite(p Prompter, dryRun, yes bool) WriteMode {
	switch {
	case dryRun:
		return WriteDry
	case yes:
		return WriteYes
	case p.CanPrompt():
		return WriteAsk
	}
	return WriteNoTerminal
}

// ConfirmWrite decides whether to write what ("3 edits to 1 session"):
// --dry-run never does, --yes always does, otherwise the user is asked on
// a terminal (p). It returns ErrFindings (exit 1) when nothing is to be
// written, and ctx's cause when the question was interrupted (Ctrl-C:
// exit 130), which writes nothing either.
func ConfirmWrite(ctx context.Context, ios *iostreams.IOStreams, p Prompter, mode WriteMode, what string) error {
	switch mode {
	case WriteYes:
		return nil
	case WriteAsk:
		ok, err := p.Confirm(ctx, "write "+what+"?")
		if err != nil {
			if ctx.Err() != nil {
				ios.Statusf("nothing written")
			}
			return err
		}
		if !ok {
			ios.Statusf("nothing written")
			return ErrFindings
		}
		return nil
	case WriteNoTerminal:
		// Said even with -q: it is why nothing was written.
		return FindingsErrorf("not written: %s; add --yes to write the %s", NotAsked(ios, "plan"), what)
	}
	ios.Statusf("dry run: %s would be written", strings.Replace(what, " to ", " in ", 1))
	return ErrFindings
}

// NotAsked says why a command did not ask before it wrote (WriteNoTerminal),
// shown is what it printed for the user to decide on ("plan"): with stdin
// a terminal, the question is not asked because stdout is not one, so the
// user would answer without having seen it.
func NotAsked(ios *iostreams.IOStreams, shown string) string {
	if ios.IsStdinTTY() && !ios.IsStdoutTTY() {
		return "the " + shown + " went to a file or pipe, so sessfix did not ask"
	}
	return "no terminal to ask on"
}
