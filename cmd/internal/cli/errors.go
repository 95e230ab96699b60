package cli

import (
	"errors"
	"fmt"
)

// ErrFindings means the command worked and findings remain (at or above
// --fail-on), or a dry run printed changes. It is not printed: the output
// already says what was found. Exit code 1.
var ErrFindings = errors.New("findings remain")

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

// Hints collects every hint attached anywhere in err's chain, outermost
// first.
func Hints(err error) []string {
	var out []string
	for err != nil {
		if h, ok := err.(*HintError); ok {
			out = append(out, h.Hints...)
		}
		err = errors.Unwrap(err)
	}
	return out
}
