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
		return store.NotFoundf("%s is not an sqlite database", path)
	case sqlite3.SQLITE_CORRUPT:
		return fmt.Errorf("%s is corrupt (%v); run `sqlite3 %s \"PRAGMA integrity_check\"` to see the damage", path, err, path)
	}
	if sys := sysErr(se.Code()); sys != nil {
		// SQLite reports its own codes; the command's hints know the system's.
		return fmt.Errorf("cannot %s %s: %w (%w)", doing, path, err, sys)
	}
	return fmt.Errorf("cannot %s %s: %w", doing, path, err)
}

// sysErr is the system error a SQLite result code stands for, when the
// user can act on it: a full disk, a read-only database or filesystem, a
// permission refused. Nil otherwise.
func sysErr(code int) error {
	switch code & 0xff {
	case sqlite3.SQLITE_FULL:
		return syscall.ENOSPC
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_AUTH:
		return fs.ErrPermission
	}
	return nil
}
