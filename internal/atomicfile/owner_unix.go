//go:build unix

package atomicfile

import (
	"io/fs"
	"os"
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

// Chown gives path the owner own when sessfix runs as root and own is set:
// a file sessfix creates in a user's store (a salvaged database, one put
// back by undo) must stay the user's, or OpenCode cannot write it. Other
// users cannot give files away, and need not: what they create is theirs.
func Chown(path string, own *Owner) error {
	if own == nil || os.Geteuid() != 0 {
		return nil
	}
	return os.Chown(path, own.UID, own.GID)
}
