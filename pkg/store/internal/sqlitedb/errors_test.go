package sqlitedb

import (
	"io/fs"
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
		if got := sysErr(code); got != want {
			t.Errorf("code %d maps to %v, want %v", code, got, want)
		}
	}
}
