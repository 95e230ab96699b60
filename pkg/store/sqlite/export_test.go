package sqlite

import (
	"errors"
	"path/filepath"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/internal/sqlitedb"
)

// Hooks for the external tests (package sqlite_test).

// SetBusyTimeout shortens the SQLite busy timeout; the returned func restores it.
func SetBusyTimeout(d time.Duration) (restore func()) { return sqlitedb.SetBusyTimeout(d) }

// OpenImmutable opens a database the way the read-only-directory
// fallback does when there is no write-ahead log.
func OpenImmutable(path string) (store.Store, error) {
	abs, _ := filepath.Abs(path)
	d, err := sqlitedb.OpenMode(abs, abs, sqlitedb.Immutable, checkSchema)
	if err != nil {
		return nil, err
	}
	return sqlitedb.NewV1(d, store.Info{Shape: store.ShapeSQLite, Path: abs}), nil
}

// OpenSnapshot opens a database the way the read-only-directory
// fallback does when the write-ahead log has content; it returns the
// snapshot's directory.
func OpenSnapshot(path string) (store.Store, string, error) {
	abs, _ := filepath.Abs(path)
	d, err := sqlitedb.OpenSnapshot(abs, abs, errors.New("test"), checkSchema)
	if err != nil {
		return nil, "", err
	}
	return sqlitedb.NewV1(d, store.Info{Shape: store.ShapeSQLite, Path: abs}), d.SnapshotDir(), nil
}

// QueryOnly runs the queries Load runs for one session and scans every
// column, but builds nothing (sqlitedb.V1.QueryOnly).
func QueryOnly(st store.Store, id string) (int, error) { return st.(*sqlitedb.V1).QueryOnly(id) }
