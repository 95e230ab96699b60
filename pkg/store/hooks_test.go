package store

import (
	"errors"
	"os"
	"path/filepath"
	"time"
)

// Hooks for the external tests (package store_test).

// SetBusyTimeout shortens the SQLite busy timeout; the returned func restores it.
func SetBusyTimeout(d time.Duration) (restore func()) {
	old := sqliteBusyTimeout
	sqliteBusyTimeout = d
	return func() { sqliteBusyTimeout = old }
}

// OpenSessionsWithOpener opens a sessions/ dir whose files are opened with
// open, to inject failures a test running as root cannot provoke.
func OpenSessionsWithOpener(dir string, open func(string) (*os.File, error)) (Store, error) {
	s, err := openSessions(dir)
	if err != nil {
		return nil, err
	}
	s.fs.open = open
	return s, nil
}

// OpenSQLiteImmutable opens a database the way the read-only-directory
// fallback does when there is no write-ahead log.
func OpenSQLiteImmutable(path string) (Store, error) {
	abs, _ := filepath.Abs(path)
	return openSQLiteMode(abs, abs, sqliteImmutable)
}

// OpenSQLiteSnapshot opens a database the way the read-only-directory
// fallback does when the write-ahead log has content.
func OpenSQLiteSnapshot(path string) (Store, string, error) {
	abs, _ := filepath.Abs(path)
	s, err := openSnapshot(abs, errors.New("test"))
	if err != nil {
		return nil, "", err
	}
	return s, s.tmp, nil
}
