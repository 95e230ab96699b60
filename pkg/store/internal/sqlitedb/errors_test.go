package sqlitedb

import (
	"database/sql"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestErrorsCarryTheSystemError(t *testing.T) {
	for code, want := range map[int]error{
		13:           syscall.ENOSPC,
		8:            fs.ErrPermission,
		8 | (1 << 8): fs.ErrPermission, // SQLITE_READONLY_RECOVERY, an extended code
		3:            fs.ErrPermission,
		1:            nil,
		5:            nil,
	} {
		if got := sysErr("x.db", code); got != want {
			t.Errorf("code %d maps to %v, want %v", code, got, want)
		}
	}
}

// TestAnIOErrorOnAFullDiskIsTheFullDisk: SQLite reports a full disk met
// while growing the -shm file of a WAL database (reading the schema) as
// SQLITE_IOERR_SHMSIZE (4874, "disk I/O error"). On a filesystem with no
// space left (diskFull, replaced here) it is ENOSPC, which the command's
// hint names; elsewhere it stays an I/O error.
func TestAnIOErrorOnAFullDiskIsTheFullDisk(t *testing.T) {
	defer func(orig func(string) bool) { diskFull = orig }(diskFull)
	for _, full := range []bool{false, true} {
		var asked string
		diskFull = func(path string) bool { asked = path; return full }
		got := sysErr("/data/opencode.db", 4874)
		if asked != "/data/opencode.db" || full != (got == syscall.ENOSPC) || !full && got != nil {
			t.Errorf("disk full %v: %v (asked about %q)", full, got, asked)
		}
	}
}

// TestARefusedWriteNamesTheDatabase: SQLite's "attempt to write a readonly
// database" carries the permission error as a *fs.PathError naming the
// database, so the command's hint can look at the file (its owner, an
// immutable flag) instead of guessing.
func TestARefusedWriteNamesTheDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opencode.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE t (x)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ro, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	_, werr := ro.Exec(`INSERT INTO t VALUES (1)`)
	got := Error(path, "write", werr)
	var pe *fs.PathError
	if !errors.As(got, &pe) || pe.Path != path || !errors.Is(got, fs.ErrPermission) {
		t.Fatalf("%v: no permission error naming %s", got, path)
	}
	if strings.Count(got.Error(), path) != 1 {
		t.Errorf("the message names the database more than once: %v", got)
	}
}
