//go:build unix

package sqlitedb

import (
	"path/filepath"

	"golang.org/x/sys/unix"
)

// diskFull reports whether the filesystem holding path (a database, or
// the directory it is in) has no block left for an unprivileged writer.
// Tests replace it.
var diskFull = func(path string) bool {
	var st unix.Statfs_t
	if unix.Statfs(path, &st) != nil && unix.Statfs(filepath.Dir(path), &st) != nil {
		return false
	}
	return st.Bavail == 0
}
