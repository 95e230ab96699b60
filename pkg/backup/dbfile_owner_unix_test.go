//go:build unix

package backup_test

import (
	"context"
	"os"
	"syscall"
	"testing"

	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
)

// owner is the uid and gid of a file.
func owner(t *testing.T, path string) [2]uint32 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return [2]uint32{st.Uid, st.Gid}
}

// TestDatabaseRepairKeepsTheOwner: a user who runs sessfix with sudo on
// their own store gets back a salvaged database, and after undo the
// original, that they still own: OpenCode, running as the user, must be
// able to write it. Run as root the database is first given to another
// user, so that keeping the owner and taking root's differ; as anyone
// else, the owner is theirs throughout and the test checks it stays so.
func TestDatabaseRepairKeepsTheOwner(t *testing.T) {
	rs, _ := damaged(t)
	if os.Geteuid() == 0 {
		if err := os.Chown(rs.Path, 4242, 4343); err != nil {
			t.Fatal(err)
		}
	}
	want := owner(t, rs.Path)
	opts := dbOptions(t)
	info := store.Info{Path: rs.Path, Shape: store.ShapeSQLite}
	run, err := backup.ApplyDatabase(context.Background(), opts, info, salvageChange())
	if err != nil {
		t.Fatalf("ApplyDatabase: %v", err)
	}
	if got := owner(t, rs.Path); got != want {
		t.Fatalf("the salvaged database is owned by %v, want %v as before", got, want)
	}
	if _, err := backup.Undo(context.Background(), opts, run, false); err != nil {
		t.Fatalf("undo: %v", err)
	}
	if got := owner(t, rs.Path); got != want {
		t.Fatalf("the database undo put back is owned by %v, want %v as before", got, want)
	}
}
