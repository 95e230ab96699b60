package watch

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sessfix/sessfix/pkg/store"
)

// storeInUse reports whether a process other than this one has the store
// open: the database or its -wal file for SQLite, any file under the store
// for the other shapes. It reads /proc/<pid>/fd of the processes it may
// inspect (the user's own); other processes are not seen.
func storeInUse(info store.Info) bool {
	path, err := filepath.Abs(info.Path)
	if err != nil {
		return false
	}
	match := func(target string) bool {
		switch info.Shape {
		case store.ShapeSQLite:
			return target == path || target == path+"-wal"
		case store.ShapeExport:
			return target == path
		}
		return target == path || strings.HasPrefix(target, path+string(filepath.Separator))
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	self := os.Getpid()
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == self {
			continue
		}
		fdDir := filepath.Join("/proc", p.Name(), "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
			if err == nil && match(target) {
				return true
			}
		}
	}
	return false
}
