package store

import (
	"errors"
	"fmt"
	"io/fs"
	"time"
)

// Errors callers map to exit codes. The typed errors below carry the facts
// a command needs to advise the user (cmd turns them into `hint:` lines);
// the packages never phrase advice themselves.
var (
	// ErrNotFound: the path holds no store sessfix recognises.
	ErrNotFound = errors.New("no opencode store found")
	// ErrUnsupported: a store sessfix recognises but cannot read (OpenCode 2.x).
	ErrUnsupported = errors.New("unsupported store")
	// ErrLocked: the store (database or sessfix writer lock) is held by someone else.
	ErrLocked = errors.New("store is locked")
	// ErrChanged means a record no longer holds the bytes a change set (or an
	// undo) expects: something changed it since it was read.
	ErrChanged = errors.New("record changed since it was read")
)

// NotFoundf is an error wrapping ErrNotFound whose message is the formatted
// sentence alone: it names the path and says what it is not, without
// ErrNotFound's own words tacked on. %w in format wraps as fmt.Errorf does.
func NotFoundf(format string, args ...any) error {
	return &kindError{err: fmt.Errorf(format, args...), kind: ErrNotFound}
}

// Unsupportedf is NotFoundf for ErrUnsupported.
func Unsupportedf(format string, args ...any) error {
	return &kindError{err: fmt.Errorf(format, args...), kind: ErrUnsupported}
}

// kindError is an error that is also one of the sentinel errors above (or
// any other error: kind), without saying so in its message.
type kindError struct{ err, kind error }

// pathCause is the system's reason in a file operation's error, without
// the operation and path it repeats ("permission denied" of "open PATH:
// permission denied"); err itself otherwise.
func pathCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.err, e.kind} }

// ChangedError is a writer's refusal: a record is no longer what a change
// set (or an undo's restore) expects, so nothing was written (or
// restored). It wraps ErrChanged.
type ChangedError struct {
	// Where names the record ("message msg_… in path"), or the whole file.
	Where string
	// How says what became of it: "was modified", "was removed", ...
	How string
	// Restoring is true for an undo's restore, false for a change set.
	Restoring bool
}

func (e *ChangedError) Error() string {
	when := "since the scan"
	if e.Restoring {
		when = "while it was being restored"
	}
	return fmt.Sprintf("%s %s %s", e.Where, e.How, when)
}

func (e *ChangedError) Unwrap() error { return ErrChanged }

// Changed is the refusal of a change set whose record (kind and id in
// where; a whole file when kind is "") is not what it expects: how says
// what became of it ("was modified", "was removed").
func Changed(where string, kind Kind, id, how string) error {
	what := fmt.Sprintf("%s %s in %s", kind, id, where)
	if kind == "" {
		what = where // a whole file: an export
	}
	return &ChangedError{Where: what, How: how}
}

// HeldError means another sessfix holds a store's writer lock. It wraps
// ErrLocked.
type HeldError struct {
	// Store is the store's path; LockFile the lock that is held.
	Store    string
	LockFile string
	// Holder is what the lock file says; nil when it cannot be read.
	Holder *LockHolder
}

func (e *HeldError) Error() string {
	who := "lock file " + e.LockFile + " is unreadable"
	if h := e.Holder; h != nil {
		who = fmt.Sprintf("pid %d on %s, started %s, sessfix %s", h.PID, h.Host, h.Started.Local().Format(time.DateTime), h.Version)
	}
	return fmt.Sprintf("%s is being repaired by another sessfix (%s)", e.Store, who)
}

func (e *HeldError) Unwrap() error { return ErrLocked }

// BusyError means a database stayed locked by another program (usually a
// running OpenCode) for longer than sessfix waits; nothing was changed. It
// wraps ErrLocked.
type BusyError struct {
	// Path is the database; Doing what sessfix was doing ("write",
	// "read the schema of", ...).
	Path  string
	Doing string
	// Err is the driver's error.
	Err error
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("cannot %s %s: the database stayed locked by another program (usually a running OpenCode)", e.Doing, e.Path)
}

func (e *BusyError) Unwrap() error { return ErrLocked }

// WriteError is a write to a store (or to its lock) that failed. The cause
// in its chain says why (a full disk is syscall.ENOSPC, a read-only
// filesystem syscall.EROFS, a refused permission fs.ErrPermission).
type WriteError struct {
	Err error
	// Unchanged is true when the store was left as it was; false when the
	// error says what was left changed.
	Unchanged bool
}

func (e *WriteError) Error() string { return e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

// WriteFailed marks err (nil stays nil) as a failed write that left the
// store unchanged, or not. Writers call it once, at the boundary of Apply
// and Restore.
func WriteFailed(err error, unchanged bool) error {
	if err == nil {
		return nil
	}
	var we *WriteError
	if errors.As(err, &we) {
		return err
	}
	return &WriteError{Err: err, Unchanged: unchanged}
}

// ReadOnlyError is the refusal to write a store sessfix reads but never
// writes (an OpenCode 2 database). Nothing was written. It wraps
// ErrUnsupported.
type ReadOnlyError struct {
	// Path and Shape name the store.
	Path  string
	Shape Shape
	// What the store is ("an OpenCode 2 database") and Why sessfix does not
	// write it.
	What, Why string
}

func (e *ReadOnlyError) Error() string {
	return fmt.Sprintf("%s is %s: sessfix reads it but never writes it (%s): %v", e.Path, e.What, e.Why, ErrUnsupported)
}

func (e *ReadOnlyError) Unwrap() error { return ErrUnsupported }

// DamagedError is the refusal to write a database that fails SQLite's own
// integrity check (a torn write, a bad sector, a page overwritten): writing
// into it can spread the damage, so nothing was written and the file is as
// it was.
type DamagedError struct {
	// Path is the database.
	Path string
	// Check is the check that failed ("integrity_check" or "quick_check").
	Check string
	// Problems are the first lines the check reported.
	Problems []string
}

func (e *DamagedError) Error() string {
	what := "the check could not read it"
	if len(e.Problems) > 0 {
		what = e.Problems[0]
		if n := len(e.Problems) - 1; n > 0 {
			what += fmt.Sprintf(" (and %d more)", n)
		}
	}
	return fmt.Sprintf("%s is damaged: sqlite's %s fails (%s); sessfix does not write into a damaged database", e.Path, e.Check, what)
}
