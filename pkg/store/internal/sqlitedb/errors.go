package sqlitedb

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sessfix/sessfix/pkg/store"
)

// Error names the database in a driver error and classifies it, for
// reads and writes alike (doing says which: "read", "write", "commit the
// repair to"). A lock another program held past the busy timeout is a
// *store.BusyError; a file that is not a database wraps ErrNotFound; a
// corrupt one says how to see the damage; a full disk, a read-only
// database or a refused permission carries the system error, so the
// command can say what to do.
func Error(path, doing string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return fmt.Errorf("cannot %s %s: %w", doing, path, err)
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return &store.BusyError{Path: path, Doing: doing, Err: err}
	case sqlite3.SQLITE_NOTADB:
		return &corruptError{store.NotFoundf("%s is not an sqlite database", path), err}
	case sqlite3.SQLITE_CORRUPT:
		return &corruptError{fmt.Errorf("%s is corrupt (%v); see the damage with `%s`", path, err, store.DamageCommand(path)), err}
	}
	if sys := sysErr(path, se.Code()); sys != nil {
		// SQLite reports its own codes; the command's hints know the
		// system's, and the file it is about.
		return fmt.Errorf("cannot %s %s: %w (%w)", doing, path, err, &sysCause{&fs.PathError{Op: doing, Path: path, Err: sys}})
	}
	return fmt.Errorf("cannot %s %s: %w", doing, path, err)
}

// sysErr is the system error a SQLite result code for the database at path
// stands for, when the user can act on it: a full disk, a read-only
// database or filesystem, a permission refused. SQLite reports a full disk
// met while growing a file it maps or syncs (the -shm file of a WAL
// database, while reading the schema) as an I/O error (SQLITE_IOERR_SHMSIZE,
// 4874, "disk I/O error"): an I/O error on a filesystem with no space left
// is taken for the full disk it is. Nil otherwise.
func sysErr(path string, code int) error {
	switch code & 0xff {
	case sqlite3.SQLITE_FULL:
		return syscall.ENOSPC
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_AUTH:
		return fs.ErrPermission
	case sqlite3.SQLITE_IOERR:
		if diskFull(path) {
			return syscall.ENOSPC
		}
	}
	return nil
}

// sysCause is the system error behind a driver error, about the database
// file: it prints as the system error alone (the message names the file
// already) and unwraps to the *fs.PathError, so a hint can look at the file.
type sysCause struct{ pe *fs.PathError }

func (e *sysCause) Error() string { return e.pe.Err.Error() }
func (e *sysCause) Unwrap() error { return e.pe }

// corruptError is an error of SQLite's SQLITE_CORRUPT or SQLITE_NOTADB:
// it reads as the classified error and keeps the driver's.
type corruptError struct {
	error
	driver error
}

func (e *corruptError) Unwrap() error { return e.error }

// Corrupt returns the driver's text of a corruption error Error classified
// (SQLITE_CORRUPT, or SQLITE_NOTADB: "file is not a database"), and
// whether err is one.
func Corrupt(err error) (string, bool) {
	var ce *corruptError
	if !errors.As(err, &ce) {
		return "", false
	}
	return ce.driver.Error(), true
}
