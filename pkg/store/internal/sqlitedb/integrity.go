package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
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

// checkMapSize is the mmap_size RunCheck gives its connection: SQLite maps
// the database file (up to its own compile-time cap, a little under 2 GiB)
// instead of reading it a page at a time, which takes about half of the
// check's CPU away (docs/performance.md). Pages in the -wal are read as
// always.
const checkMapSize = 1 << 31

// RunCheck runs SQLite's check ("integrity_check" or "quick_check") and
// returns a *store.DamagedError when it reports anything but "ok", or when
// the database is too corrupt for the check to run.
//
// The check reads the file through a memory map, on a connection of its
// own. A mapped page that is gone (the file cut short by another program
// while it is checked) faults instead of failing a read: the fault is
// turned into an error naming the file, and that connection, whose SQLite
// state the fault left half-way, is never used again.
func RunCheck(ctx context.Context, db *sql.DB, path, check string) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return integrityError(path, check, err)
	}
	mapped := false
	if _, err := conn.ExecContext(ctx, "PRAGMA mmap_size = "+strconv.Itoa(checkMapSize)); err == nil {
		mapped = true
	}
	var checkErr error
	if fault := catchFault(func() { checkErr = runCheck(ctx, conn, path, check) }); fault != nil {
		return Error(path, "check", fmt.Errorf("the file changed while it was checked (%v): run the command again once no other program writes it", fault))
	}
	if mapped {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA mmap_size = 0")
	}
	conn.Close()
	return checkErr
}

// catchFault runs f and returns the memory fault it hit (a mapped page that
// is gone), nil when none. Any other panic goes on.
func catchFault(f func()) (fault error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(interface {
				error
				Addr() uintptr
			}); ok {
				fault = e
				return
			}
			panic(r)
		}
	}()
	f()
	return nil
}

func runCheck(ctx context.Context, conn *sql.Conn, path, check string) error {
	rows, err := conn.QueryContext(ctx, "PRAGMA "+check+"(10)")
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
