//go:build linux

package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// immutable reports whether the file at path carries the immutable flag
// (chattr +i), which refuses every write, root's too. Tests replace it.
var immutable = func(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	flags, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
	return err == nil && flags&fsImmutableFL != 0
}

// fsImmutableFL is FS_IMMUTABLE_FL of linux/fs.h.
const fsImmutableFL = 0x00000010
