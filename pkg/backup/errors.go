package backup

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/store"
)

// ErrNoRuns means the journal holds no run to undo.
var ErrNoRuns = errors.New("no sessfix backup runs")

// ErrNoRun means the named run does not exist.
var ErrNoRun = errors.New("no such backup run")

// StateDirError means sessfix's state directory cannot be located: neither
// SESSFIX_STATE_DIR, XDG_STATE_HOME nor a home directory is known.
type StateDirError struct{ Err error }

func (e *StateDirError) Error() string {
	return "cannot find the sessfix state directory: " + e.Err.Error()
}

func (e *StateDirError) Unwrap() error { return e.Err }

// JournalError means the backup of a change set could not be written, so
// nothing was applied: sessfix writes nothing it has not backed up.
type JournalError struct{ Err error }

func (e *JournalError) Error() string { return e.Err.Error() }
func (e *JournalError) Unwrap() error { return e.Err }

// ApplyError is Apply's failure of one change set, once the run had begun.
// The sessions written before it stay written: undo RunID reverts them.
type ApplyError struct {
	// Session is the session whose change set failed.
	Session string
	// Written are the sessions whose change sets were applied before the
	// failure (and the failed one when it was applied but could not be
	// recorded), in order.
	Written []string
	// RunID is the backup run that holds them ("" when nothing was
	// written).
	RunID string
	Err   error
}

func (e *ApplyError) Error() string { return "session " + e.Session + ": " + e.Err.Error() }
func (e *ApplyError) Unwrap() error { return e.Err }

// StoreGoneError is Undo's refusal when the store a run changed is no
// longer where the run found it.
type StoreGoneError struct {
	RunID string
	Store store.Info
	// Before is the run's folder of backed-up records.
	Before string
}

func (e *StoreGoneError) Error() string {
	return fmt.Sprintf("cannot undo run %s: the %s store it changed, %s, is gone (moved or deleted); nothing was restored",
		e.RunID, e.Store.Shape, e.Store.Path)
}

// RefusedError is Undo's refusal when records changed after the run wrote
// them; nothing was restored. It wraps store.ErrChanged.
type RefusedError struct {
	RunID   string
	Refused []Refusal
}

func (e *RefusedError) Error() string {
	n := len(e.Refused)
	lines := make([]string, n)
	for i, r := range e.Refused {
		lines[i] = "  " + r.Target.String() + ": " + r.Reason
	}
	return fmt.Sprintf("cannot undo run %s: %d %s changed after sessfix wrote %s; nothing was restored:\n%s",
		e.RunID, n, plural.Word(n, "record", "records"), plural.Word(n, "it", "them"), strings.Join(lines, "\n"))
}

func (e *RefusedError) Unwrap() error { return store.ErrChanged }
