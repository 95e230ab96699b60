package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// DefaultBusyTimeout is how long a read or a write waits for a database
// another process holds: the same 5 s as OpenCode's own busy_timeout.
const DefaultBusyTimeout = 5 * time.Second

// readBusyTimeout is the busy timeout of the read-only connections Open
// makes. Tests shorten it (SetBusyTimeout).
var readBusyTimeout = DefaultBusyTimeout

// SetBusyTimeout sets the busy timeout of read-only connections opened
// from now on; the returned func restores it. For tests.
func SetBusyTimeout(d time.Duration) (restore func()) {
	old := readBusyTimeout
	readBusyTimeout = d
	return func() { readBusyTimeout = old }
}

// magic starts every SQLite database file.
const magic = "SQLite format 3\x00"

// IsSQLiteFile reports whether the file at path starts with SQLite's magic
// header.
func IsSQLiteFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var buf [len(magic)]byte
	if _, err := io.ReadFull(f, buf[:]); err != nil {
		return false
	}
	return string(buf[:]) == magic
}

// DB is a database opened read-only and query-only: safe while OpenCode has
// it open in WAL mode and writes to it.
type DB struct {
	// SQL is the connection pool.
	SQL *sql.DB
	// Path is the database file locations name: the file opened, or the
	// original of a snapshot copy.
	Path string
	// Notes say how the file was read when a fallback was needed.
	Notes []string
	// tmp is a snapshot copy's directory, removed on Close.
	tmp string
}

// Close closes the connections and removes a snapshot copy.
func (d *DB) Close() error {
	err := d.SQL.Close()
	if d.tmp != "" {
		os.RemoveAll(d.tmp)
	}
	return err
}

// Mode is how a database file is opened.
type Mode int

const (
	ReadOnly  Mode = iota // mode=ro: the normal case
	Immutable             // immutable=1: read-only directory, no WAL content
)

func dsn(path string, mode Mode) string {
	ms := readBusyTimeout.Milliseconds()
	q := "mode=ro&_pragma=busy_timeout(" + strconv.FormatInt(ms, 10) + ")&_pragma=query_only(1)"
	if mode == Immutable {
		q += "&immutable=1"
	}
	return "file:" + uriPath(path) + "?" + q
}

// uriPath escapes the characters that end or alter the path part of an
// SQLite URI filename.
func uriPath(p string) string {
	p = filepath.ToSlash(p)
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	return r.Replace(p)
}

// A Check inspects a freshly opened database (its schema): an error ends
// the open. Its first query is also where a read-only directory shows.
type Check func(ctx context.Context, db *sql.DB, path string) error

// Open opens the database at path read-only and runs check on it. A
// database locked by an exclusive writer is an error wrapping
// store.ErrLocked once the busy timeout has passed (Error).
//
// When the directory is read-only and the -shm file cannot be created, the
// database is read with immutable=1 if there is no WAL content, or from a
// private snapshot copy of the database and its -wal file otherwise; a
// note says so.
func Open(path string, check Check) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", path, err)
	}
	// Locations name the file as the user named it (relative stays
	// relative), as every other shape does; the file opened is abs.
	path = filepath.Clean(path)
	if fi, err := os.Stat(abs); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
		// SQLite would take it for a database without tables.
		return nil, store.NotFoundf("%s is an empty file (0 bytes), not an opencode database", path)
	}
	d, err := OpenMode(abs, path, ReadOnly, check)
	if err == nil || !needsFallback(err) {
		return d, err
	}
	if _, shmErr := os.Stat(abs + "-shm"); shmErr == nil {
		return nil, err // the shared-memory file exists: the failure is something else
	}
	if fi, werr := os.Stat(abs + "-wal"); werr != nil || fi.Size() == 0 {
		d, err2 := OpenMode(abs, path, Immutable, check)
		if err2 != nil {
			return nil, err
		}
		d.Notes = append(d.Notes, path+" read as immutable: its directory is read-only and it has no write-ahead log")
		return d, nil
	}
	return OpenSnapshot(abs, path, err, check)
}

// needsFallback reports whether opening failed because the shared-memory
// file of a WAL database could not be created or opened.
func needsFallback(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_IOERR:
		return true
	}
	return false
}

// OpenSnapshot copies the database and its -wal file into a private temp
// directory and reads the copy (Open's fallback when cause kept the
// database itself from being read). Locations still name the original
// file.
func OpenSnapshot(abs, path string, cause error, check Check) (*DB, error) {
	tmp, err := os.MkdirTemp("", "sessfix-db-")
	if err != nil {
		return nil, fmt.Errorf("read %s: %w (and no snapshot copy could be made: %v)", abs, cause, err)
	}
	dst := filepath.Join(tmp, filepath.Base(abs))
	for _, suffix := range []string{"", "-wal"} {
		if err := copyFile(abs+suffix, dst+suffix); err != nil {
			os.RemoveAll(tmp)
			return nil, fmt.Errorf("read %s: %w (and no snapshot copy could be made: %v)", abs, cause, err)
		}
	}
	d, err := OpenMode(dst, path, ReadOnly, check)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	d.tmp = tmp
	d.Notes = append(d.Notes, path+" read from a snapshot copy: its directory is read-only and its write-ahead log has changes not yet merged")
	return d, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// OpenMode opens file (which may be a snapshot copy) in mode, reports
// locations as path, and runs check.
func OpenMode(file, path string, mode Mode, check Check) (*DB, error) {
	db, err := sql.Open("sqlite", dsn(file, mode))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxIdleConns(4)
	if err := check(context.Background(), db, path); err != nil {
		db.Close()
		return nil, err
	}
	return &DB{SQL: db, Path: path}, nil
}

// SnapshotDir is the directory of the private snapshot copy the database
// is read from ("" when it is read in place); Close removes it.
func (d *DB) SnapshotDir() string { return d.tmp }
