//go:build unix

package recordfile

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// Open opens a file or directory for reading without registering it
// with the runtime's poller: os.Open tries to, which costs four fcntl calls
// and a failing epoll_ctl for every regular file, more than the read
// itself for the small files of a JSON store.
func Open(name string) (*os.File, error) {
	for {
		fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == nil {
			return os.NewFile(uintptr(fd), name), nil
		}
		if !errors.Is(err, syscall.EINTR) {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
}
