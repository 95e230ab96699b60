//go:build unix

package atomicfile

import (
	"io/fs"
	"syscall"
)

// OwnerOf returns the owner of a file, so a rewrite can keep it.
func OwnerOf(fi fs.FileInfo) *Owner {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	return &Owner{UID: int(st.Uid), GID: int(st.Gid)}
}
