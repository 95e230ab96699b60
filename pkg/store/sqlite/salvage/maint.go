package salvage

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Reindex rebuilds every index of the database at path from its tables
// (the repair when only index pages are damaged) and checks the result
// with integrity_check. It writes the database in place: its caller has
// backed the database up and holds sessfix's writer lock; Reindex takes
// no lock of its own beyond SQLite's.
func Reindex(ctx context.Context, path string) error {
	db, err := openInPlace(path)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "REINDEX"); err != nil {
		return fmt.Errorf("reindex %s: %w", path, err)
	}
	lines, err := strings1(ctx, db, "PRAGMA integrity_check")
	if err != nil {
		return fmt.Errorf("check %s after reindex: %w", path, err)
	}
	if got := strings.Join(lines, "; "); got != "ok" {
		return fmt.Errorf("%s still fails integrity_check after reindex: %s", path, got)
	}
	return nil
}

// Checkpoint merges the database's write-ahead log into the database file
// and truncates the log (wal_checkpoint(TRUNCATE)). It is an error when a
// reader or writer kept the checkpoint from completing. Same contract as
// Reindex: the caller has backed up the database and holds the lock.
func Checkpoint(ctx context.Context, path string) error {
	db, err := openInPlace(path)
	if err != nil {
		return err
	}
	defer db.Close()
	var busy, logFrames, done int
	if err := db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &done); err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if busy != 0 {
		return fmt.Errorf("checkpoint %s: another connection kept it from completing (%d of %d frames merged)", path, done, logFrames)
	}
	return nil
}

// openInPlace opens path read-write, without creating it, with OpenCode's
// busy timeout.
func openInPlace(path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file:"+uriPath(path)+"?mode=rw&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}
