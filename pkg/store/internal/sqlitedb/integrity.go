package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sessfix/sessfix/pkg/store"
)

// WholeCheckLimit is the largest database CheckIntegrity runs SQLite's full
// integrity_check on; a larger one gets quick_check, which checks every
// page's structure but not that indexes match their tables.
const WholeCheckLimit = 256 << 20

// maxProblems is how many lines of the check's report are kept.
const maxProblems = 10

// CheckIntegrity runs SQLite's integrity check on the database (the whole
// integrity_check up to WholeCheckLimit bytes, quick_check above) and
// returns a *store.DamagedError when it reports anything but "ok", or when
// the database is too corrupt for the check to run. Writers call it before
// their first write: a write into a damaged database can spread the damage.
func CheckIntegrity(ctx context.Context, db *sql.DB, path string) error {
	check := "integrity_check"
	if fi, err := os.Stat(path); err == nil && fi.Size() > WholeCheckLimit {
		check = "quick_check"
	}
	return RunCheck(ctx, db, path, check)
}

// RunCheck runs SQLite's check ("integrity_check" or "quick_check") and
// returns a *store.DamagedError when it reports anything but "ok", or when
// the database is too corrupt for the check to run.
func RunCheck(ctx context.Context, db *sql.DB, path, check string) error {
	rows, err := db.QueryContext(ctx, "PRAGMA "+check+"(10)")
	if err != nil {
		return integrityError(path, check, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return integrityError(path, check, err)
		}
		if line != "ok" && len(problems) < maxProblems {
			problems = append(problems, trimProblem(line))
		}
	}
	if err := rows.Err(); err != nil {
		return integrityError(path, check, err)
	}
	if len(problems) > 0 {
		return &store.DamagedError{Path: path, Check: check, Problems: problems}
	}
	return nil
}

// integrityError is a check that could not run: corruption found on the
// way is the damage itself; any other failure is classified by Error.
func integrityError(path, check string, err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_CORRUPT {
		return &store.DamagedError{Path: path, Check: check, Problems: []string{strings.TrimSpace(err.Error())}}
	}
	return Error(path, "check", err)
}
