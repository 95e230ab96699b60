//go:build linux || darwin

package recordfile

import (
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
	"golang.org/x/sys/unix"
)

// OpenAt says ReadAt opens files relative to a held directory.
const OpenAt = true

// ReadAt reads the record file name in the open directory dir (p is its
// path, for errors) with raw system calls: openat relative to the
// directory (no walk of the whole path), fstat, read and close, without an
// *os.File and its finalizer for each of a store's many small files. It
// follows a symlink like opening by path does; the reader has already checked
// that a symlinked entry stays inside the store. O_NONBLOCK keeps a file
// that became a FIFO since the listing from blocking the open; fstat then
// reports it as not a regular file.
func ReadAt(dir *os.File, name, p string) ([]byte, time.Time, *store.ParseError) {
	var fd int
	var err error
	for {
		fd, err = unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, time.Time{}, Error(p, &fs.PathError{Op: "open", Path: p, Err: err})
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, time.Time{}, Error(p, &fs.PathError{Op: "stat", Path: p, Err: err})
	}
	mtime := time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec))
	mode := st.Mode & unix.S_IFMT
	return readBody(p, st.Size, mode == unix.S_IFDIR, mode == unix.S_IFREG, mtime, func(b []byte) (int, error) {
		for {
			n, err := unix.Read(fd, b)
			switch {
			case err == unix.EINTR:
				continue
			case err != nil:
				return 0, &fs.PathError{Op: "read", Path: p, Err: err}
			case n == 0 && len(b) > 0:
				return 0, io.EOF
			}
			return n, nil
		}
	})
}
