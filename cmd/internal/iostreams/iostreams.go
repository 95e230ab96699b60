package iostreams

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/mattn/go-isatty"
)

// Colour modes accepted by --color.
const (
	ColorAuto   = "auto"
	ColorAlways = "always"
	ColorNever  = "never"
)

// ColorModes lists the values of --color, for help and completion.
var ColorModes = []string{ColorAuto, ColorAlways, ColorNever}

// IOStreams holds the standard streams and the terminal and colour decisions
// made about them.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	stdinTTY  bool
	stdoutTTY bool
	stderrTTY bool
	getenv    func(string) string

	colorMode string
	colorOnce sync.Once
	color     bool

	quiet bool

	lines lineReader // ReadLine's
}

// System returns streams bound to the process's stdin, stdout and stderr.
func System() *IOStreams {
	return &IOStreams{
		In:        os.Stdin,
		Out:       os.Stdout,
		ErrOut:    os.Stderr,
		stdinTTY:  isTerminal(os.Stdin),
		stdoutTTY: isTerminal(os.Stdout),
		stderrTTY: isTerminal(os.Stderr),
		getenv:    os.Getenv,
		colorMode: ColorAuto,
	}
}

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// Test returns streams over buffers, not terminals, with an empty
// environment. Use SetStdoutTTY, SetStderrTTY and SetEnv to change that.
func Test() (ios *IOStreams, in, out, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	ios = &IOStreams{
		In:        in,
		Out:       out,
		ErrOut:    errOut,
		getenv:    func(string) string { return "" },
		colorMode: ColorAuto,
	}
	return ios, in, out, errOut
}

// IsStdinTTY reports whether stdin is a terminal.
func (s *IOStreams) IsStdinTTY() bool { return s.stdinTTY }

// SetStdinTTY overrides whether stdin counts as a terminal.
func (s *IOStreams) SetStdinTTY(v bool) { s.stdinTTY = v }

// CanPrompt reports whether the user can be asked a question: stdin and
// stdout are terminals.
func (s *IOStreams) CanPrompt() bool { return s.stdinTTY && s.stdoutTTY }

// SetStdoutTTY overrides whether stdout counts as a terminal.
func (s *IOStreams) SetStdoutTTY(v bool) { s.stdoutTTY = v }

// SetStderrTTY overrides whether stderr counts as a terminal.
func (s *IOStreams) SetStderrTTY(v bool) { s.stderrTTY = v }

// SetEnv replaces the environment the colour decision reads (tests).
func (s *IOStreams) SetEnv(env map[string]string) {
	s.getenv = func(k string) string { return env[k] }
}

// IsStdoutTTY reports whether stdout is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// IsStderrTTY reports whether stderr is a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.stderrTTY }

// SetQuiet suppresses status lines, notes, hints and progress on stderr.
// Errors are still printed.
func (s *IOStreams) SetQuiet(v bool) { s.quiet = v }

// Quiet reports whether status output is suppressed.
func (s *IOStreams) Quiet() bool { return s.quiet }

// SetColorMode sets the --color mode. It must be called before the first
// ColorEnabled call; later calls have no effect on the decision.
func (s *IOStreams) SetColorMode(mode string) error {
	switch mode {
	case ColorAuto, ColorAlways, ColorNever:
		s.colorMode = mode
		return nil
	case "":
		s.colorMode = ColorAuto
		return nil
	}
	return fmt.Errorf("invalid --color %q: want %s", mode, strings.Join(ColorModes, ", "))
}

// ColorEnabled reports whether stdout output is coloured. The decision is
// made on the first call and never changes afterwards.
func (s *IOStreams) ColorEnabled() bool {
	s.colorOnce.Do(func() { s.color = s.decideColor() })
	return s.color
}

func (s *IOStreams) decideColor() bool {
	switch s.colorMode {
	case ColorAlways:
		return true
	case ColorNever:
		return false
	}
	if s.getenv("NO_COLOR") != "" {
		return false
	}
	if forced(s.getenv("CLICOLOR_FORCE")) || forced(s.getenv("FORCE_COLOR")) {
		return true
	}
	if s.getenv("TERM") == "dumb" {
		return false
	}
	return s.stdoutTTY
}

func forced(v string) bool { return v != "" && v != "0" && !strings.EqualFold(v, "false") }

// Statusf prints a status line on stderr unless quiet.
func (s *IOStreams) Statusf(format string, args ...any) {
	if s.quiet {
		return
	}
	fmt.Fprintf(s.ErrOut, format+"\n", args...)
}
