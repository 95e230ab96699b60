package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
)

// Hooks for the external tests (package sqlite_test).

// SetBusyTimeout shortens the SQLite busy timeout; the returned func restores it.
func SetBusyTimeout(d time.Duration) (restore func()) {
	old := readBusyTimeout
	readBusyTimeout = d
	return func() { readBusyTimeout = old }
}

// OpenImmutable opens a database the way the read-only-directory
// fallback does when there is no write-ahead log.
func OpenImmutable(path string) (store.Store, error) {
	abs, _ := filepath.Abs(path)
	return openSQLiteMode(abs, abs, sqliteImmutable)
}

// OpenSnapshot opens a database the way the read-only-directory
// fallback does when the write-ahead log has content.
func OpenSnapshot(path string) (store.Store, string, error) {
	abs, _ := filepath.Abs(path)
	s, err := openSnapshot(abs, errors.New("test"))
	if err != nil {
		return nil, "", err
	}
	return s, s.tmp, nil
}

// QueryOnly runs the queries Load runs for one session (its messages
// and its parts, in one read transaction) and scans every column into the
// types Load uses, but builds nothing: what reading the session out of the
// database costs before any record is made. It returns the rows read.
func QueryOnly(st store.Store, id string) (int, error) {
	s := st.(*sqliteStore)
	stmts, err := s.prepare()
	if err != nil {
		return 0, err
	}
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	n := 0
	rows, err := tx.StmtContext(ctx, stmts.messages).QueryContext(ctx, id)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		var rowid, created, updated int64
		var mid string
		var data columnBytes
		if err := rows.Scan(&rowid, &mid, &created, &updated, &data); err != nil {
			rows.Close()
			return 0, err
		}
		n++
	}
	rows.Close()
	if rows, err = tx.StmtContext(ctx, stmts.parts).QueryContext(ctx, id); err != nil {
		return 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var rowid, updated int64
		var pid, mid, sid string
		var data columnBytes
		if err := rows.Scan(&rowid, &pid, &mid, &sid, &updated, &data); err != nil {
			return 0, err
		}
		n++
	}
	return n, rows.Err()
}
