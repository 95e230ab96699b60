package salvage

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Reindex rebuilds every index of the database at path from its tables
// (the repair when only index pages are damaged) and checks the result
// with integrity_check. SQLite's REINDEX first empties an index by walking
// its pages, which fails on a damaged page; then Reindex removes the
// indexes created by CREATE INDEX from the schema (their pages become
// unused), rebuilds the file with VACUUM, which reads only the tables,
// and creates the indexes again from their statements. An index that
// belongs to a PRIMARY KEY or UNIQUE constraint cannot be taken out that
// way: when one of those is damaged the check fails and the database needs
// Salvage.
//
// Reindex writes the database in place: its caller has backed the
// database up and holds sessfix's writer lock; Reindex takes no lock of
// its own beyond SQLite's. A failure part-way can leave the database
// without its indexes; the backup is what puts it back.
func Reindex(ctx context.Context, path string) error {
	db, err := openInPlace(path)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "REINDEX"); err != nil {
		db.Close()
		if err := rebuildIndexes(ctx, path); err != nil {
			return fmt.Errorf("reindex %s: %w", path, err)
		}
		if db, err = openInPlace(path); err != nil {
			return err
		}
		defer db.Close()
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

// rebuildIndexes drops the CREATE INDEX indexes from the schema without
// touching their pages, vacuums, and creates them again.
func rebuildIndexes(ctx context.Context, path string) error {
	db, err := openInPlace(path)
	if err != nil {
		return err
	}
	defer db.Close()
	stmts, err := strings1(ctx, db, "SELECT sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY rowid")
	if err != nil {
		return err
	}
	for _, q := range []string{"PRAGMA writable_schema = ON", "DELETE FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL", "PRAGMA writable_schema = OFF"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	db.Close() // the next connection reads the schema without the indexes
	if db, err = openInPlace(path); err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "VACUUM"); err != nil {
		return err
	}
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return err
		}
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

// Vacuum rewrites the database at path without its free pages (SQLite's
// VACUUM), then folds the write-ahead log, which holds the rewritten
// pages of a database in WAL mode, into the file and truncates it, so the
// file shrinks, and checks the result with quick_check. Same contract as
// Reindex: the caller has backed up the database and holds the lock; a
// failure part-way is put back from the backup.
func Vacuum(ctx context.Context, path string) error {
	db, err := openInPlace(path)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "VACUUM"); err != nil {
		return fmt.Errorf("vacuum %s: %w", path, err)
	}
	var busy, logFrames, done int
	if err := db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &done); err != nil {
		return fmt.Errorf("checkpoint %s after vacuum: %w", path, err)
	}
	if busy != 0 {
		return fmt.Errorf("checkpoint %s after vacuum: another connection kept it from completing (%d of %d frames merged)", path, done, logFrames)
	}
	lines, err := strings1(ctx, db, "PRAGMA quick_check")
	if err != nil {
		return fmt.Errorf("check %s after vacuum: %w", path, err)
	}
	if got := strings.Join(lines, "; "); got != "ok" {
		return fmt.Errorf("%s fails quick_check after vacuum: %s", path, got)
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
