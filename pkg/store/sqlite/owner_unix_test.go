//go:build unix

package sqlite_test

import (
	"os"
	"syscall"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// TestReadingKeepsTheSidecarsTheUsers: reading a WAL database makes SQLite
// create its -wal and -shm when OpenCode has not. Made by sessfix run with
// sudo, they would be root's, and OpenCode, running as the user, could no
// longer open its database; SQLite's unix VFS gives them the database's
// owner when it runs as root, and this test holds sessfix's driver to it.
// As root, the database is first given to another user, and the files a
// scan makes must be that user's, while the store is open and after it is
// closed; as anyone else they are theirs anyway, and the test checks that
// they stay so.
func TestReadingKeepsTheSidecarsTheUsers(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	// OpenCode keeps its database in WAL mode; the recorded copy was
	// written back in rollback mode.
	storetest.ExecSQL(t, rs.Path, "PRAGMA journal_mode=WAL")
	for _, suf := range []string{"-wal", "-shm"} {
		if err := os.Remove(rs.Path + suf); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(rs.Path, 4242, 4343); err != nil {
			t.Fatal(err)
		}
	}
	uid := func(path string) (uint32, bool) {
		fi, err := os.Stat(path)
		if err != nil {
			return 0, false
		}
		return fi.Sys().(*syscall.Stat_t).Uid, true
	}
	want, _ := uid(rs.Path)
	check := func(when string) {
		t.Helper()
		seen := 0
		for _, suf := range []string{"-wal", "-shm"} {
			got, ok := uid(rs.Path + suf)
			if !ok {
				continue
			}
			seen++
			if got != want {
				t.Errorf("%s: %s%s is owned by uid %d, want %d as the database", when, rs.Path, suf, got, want)
			}
		}
		if seen == 0 && when == "open" {
			t.Fatalf("reading the WAL database made no -wal or -shm: the test checks nothing")
		}
	}
	d, err := shapes.Open([]string{rs.Path})
	if err != nil {
		t.Fatal(err)
	}
	storetest.LoadAll(t, d.Stores[0])
	check("open")
	d.Close()
	check("closed")
}
