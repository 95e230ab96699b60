//go:build unix

package store

import (
	"io/fs"
	"syscall"
)

// fileOwner returns the owner of a file, so a rewrite can keep it.
func fileOwner(fi fs.FileInfo) (uid, gid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}
