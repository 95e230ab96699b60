package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"

	"github.com/sessfix/sessfix/cmd/internal/iostreams"
)

// AskLine asks a yes/no question on out and reads the answer from in: only
// "y" or "yes" is yes; end of input is no.
func AskLine(in io.Reader, out io.Writer, q string) (bool, error) {
	fmt.Fprintf(out, "%s [y/N] ", q)
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && line == "" {
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, err
	}
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes", nil
}

// IsTTY reports whether r is a terminal.
func IsTTY(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
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

// DecideWrite decides, before planning, whether a run may write.
// interactive reports whether the user can be asked; nil means stdin and
// stdout are terminals.
func DecideWrite(ios *iostreams.IOStreams, dryRun, yes bool, interactive func() bool) WriteMode {
	switch {
	case dryRun:
		return WriteDry
	case yes:
		return WriteYes
	}
	if interactive == nil {
		interactive = func() bool { return IsTTY(ios.In) && ios.IsStdoutTTY() }
	}
	if interactive() {
		return WriteAsk
	}
	return WriteNoTerminal
}

// ConfirmWrite decides whether to write what ("3 edits to 1 session"):
// --dry-run never does, --yes always does, otherwise the user is asked on
// a terminal (confirm, or a line read from stdin). It returns ErrFindings
// (exit 1) when nothing is to be written.
func ConfirmWrite(ios *iostreams.IOStreams, mode WriteMode, what string, confirm func(q string) (bool, error)) error {
	switch mode {
	case WriteYes:
		return nil
	case WriteAsk:
		if confirm == nil {
			confirm = func(q string) (bool, error) { return AskLine(ios.In, ios.ErrOut, q) }
		}
		ok, err := confirm("write " + what + "?")
		if err != nil {
			return err
		}
		if !ok {
			ios.Statusf("nothing written")
			return ErrFindings
		}
		return nil
	case WriteNoTerminal:
		// Said even with -q: it is why nothing was written.
		return FindingsErrorf("not written: no terminal to ask on; add --yes to write the %s", what)
	}
	ios.Statusf("dry run: %s would be written", strings.Replace(what, " to ", " in ", 1))
	return ErrFindings
}
