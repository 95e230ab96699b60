package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"

	"github.com/sessfix/sessfix/pkg/backup"
)

// ErrFindings means the command worked and findings remain (at or above
// --fail-on), or a dry run printed changes. It is not printed: the output
// already says what was found. Exit code 1.
var ErrFindings = errors.New("findings remain")

// FindingsErrorf is ErrFindings (exit code 1) with a message that is
// printed, -q or not: why the run ends with changes it did not make, when
// its output alone does not say so (fix without a terminal to ask on).
func FindingsErrorf(format string, args ...any) error {
	return &findingsError{msg: fmt.Sprintf(format, args...)}
}

type findingsError struct{ msg string }

func (e *findingsError) Error() string        { return e.msg }
func (e *findingsError) Is(target error) bool { return target == ErrFindings }

// FlagError is a usage error: a bad flag, argument or rule code. Exit code 2.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// FlagErrorf returns a usage error.
func FlagErrorf(format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...)}
}

// HintError carries advice printed as `hint: …` lines after the error.
type HintError struct {
	Err   error
	Hints []string
}

func (e *HintError) Error() string { return e.Err.Error() }
func (e *HintError) Unwrap() error { return e.Err }

// WithHints attaches hints to err (nil stays nil).
func WithHints(err error, hints ...string) error {
	if err == nil {
		return nil
	}
	return &HintError{Err: err, Hints: hints}
}

// Hints returns the `hint:` lines for err, each once: first the advice for
// what the packages reported through their typed errors (see libraryHint),
// then the hints commands attached with WithHints, outermost first; both
// in the order the error tree holds them, joined errors included.
func Hints(err error) []string {
	var out []string
	seen := map[string]bool{}
	var within *backup.ApplyError
	errors.As(err, &within)
	add := func(hs []string) {
		for _, h := range hs {
			if !seen[h] {
				seen[h] = true
				out = append(out, h)
			}
		}
	}
	walk(err, func(e error) { add(libraryHint(e, within)) })
	walk(err, func(e error) {
		if h, ok := e.(*HintError); ok {
			add(h.Hints)
		}
	})
	if errors.Is(err, syscall.ENOSPC) && !slices.ContainsFunc(out, func(h string) bool { return strings.HasPrefix(h, diskFull) }) {
		// A read or an open (SQLite growing its -shm file) met the full
		// disk, not a write's typed error: the advice is the same.
		out = append([]string{diskFull + "; free some space and run sessfix again"}, out...)
	}
	return out
}

// diskFull begins the hint for a full disk.
const diskFull = "the disk is full"

// walk calls visit for err and every error it wraps, depth first, joined
// errors included.
func walk(err error, visit func(error)) {
	if err == nil {
		return
	}
	visit(err)
	switch e := err.(type) {
	case interface{ Unwrap() error }:
		walk(e.Unwrap(), visit)
	case interface{ Unwrap() []error }:
		for _, c := range e.Unwrap() {
			walk(c, visit)
		}
	}
}

// rerunError asks for a hint that is the user's own command line with
// flags added (see RerunWith).
type rerunError struct {
	err error
	add []string
}

func (e *rerunError) Error() string { return e.err.Error() }
func (e *rerunError) Unwrap() error { return e.err }

// RerunWith marks err for the hint "run: " + the command line the user
// typed with add appended (`sessfix fix demo --diff` → `run: sessfix fix
// demo --diff --dry-run`), so that the hint runs as printed on the same
// stores and sessions. Only the command's runner holds that line:
// RerunHint writes the hint there.
func RerunWith(err error, add ...string) error {
	if err == nil {
		return nil
	}
	return &rerunError{err: err, add: add}
}

// RerunHint gives an error marked by RerunWith its hint, built from args
// (the arguments the command ran with, without the program's name); flags
// go before a "--" that ends them. Any other error is returned as it is.
func RerunHint(err error, args []string) error {
	var re *rerunError
	if !errors.As(err, &re) {
		return err
	}
	line := slices.Clone(args)
	end := slices.Index(line, "--")
	if end < 0 {
		end = len(line)
	}
	line = slices.Insert(line, end, re.add...)
	return WithHints(err, "run: "+CommandLine(line...))
}
