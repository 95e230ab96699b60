package recordfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
)

// MaxSize bounds how much of one record file is read. OpenCode's
// largest parts (tool outputs, file attachments) stay far below it; a file
// above it is reported as a Broken record rather than read into memory.
const MaxSize = 256 << 20

// Read reads the record file at path with a bounded read. It returns the
// bytes and the file's mtime, or a *store.ParseError naming the file. open
// opens the file (nil: Open); tests pass one to inject failures that cannot
// be produced as root.
func Read(path string, open func(string) (*os.File, error)) ([]byte, time.Time, *store.ParseError) {
	if open == nil {
		open = Open
	}
	f, err := open(path)
	if err != nil {
		return nil, time.Time{}, Error(path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, Error(path, err)
	}
	return readBody(path, fi.Size(), fi.IsDir(), fi.Mode().IsRegular(), fi.ModTime(), f.Read)
}

// readBody reads the open file p, whose fstat said size, dir, regular and
// mtime, with a bounded read: read is the file's Read.
func readBody(p string, size int64, dir, regular bool, mtime time.Time, read func([]byte) (int, error)) ([]byte, time.Time, *store.ParseError) {
	if dir {
		return nil, mtime, &store.ParseError{Entry: true, Reason: "is a directory", Detail: p}
	}
	if !regular {
		return nil, mtime, &store.ParseError{Entry: true, Reason: "not a regular file", Detail: p}
	}
	if size > MaxSize {
		return nil, mtime, &store.ParseError{Reason: "too large", Detail: fmt.Sprintf("%s has %d bytes (limit %d)", p, size, MaxSize)}
	}
	buf := make([]byte, 0, size+1)
	for {
		n, err := read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, mtime, Error(p, err)
		}
		// A short read that ends where Stat said the file ends is the end
		// of a regular file: no second read to see io.EOF.
		if int64(len(buf)) == size && len(buf) < cap(buf) {
			break
		}
		if len(buf) > MaxSize {
			return nil, mtime, &store.ParseError{Reason: "too large", Detail: fmt.Sprintf("%s grew past %d bytes while reading", p, MaxSize)}
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
	return buf, mtime, nil
}

// Error turns a filesystem error into a *store.ParseError naming the file.
func Error(p string, err error) *store.ParseError {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return &store.ParseError{Entry: true, Reason: "permission denied", Detail: p}
	case errors.Is(err, fs.ErrNotExist):
		return &store.ParseError{Entry: true, Reason: "vanished", Detail: p + " no longer exists"}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &store.ParseError{Entry: true, Reason: "unreadable", Detail: p + ": " + err.Error()}
}
