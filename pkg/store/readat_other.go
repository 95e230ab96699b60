//go:build !(linux || darwin)

package store

import (
	"os"
	"time"
)

// openAtDir says readAt cannot open files relative to a directory here:
// directories are not held open and readAt is never called.
const openAtDir = false

func readAt(dir *os.File, name, p string) ([]byte, time.Time, *ParseError) {
	return (&fsRoot{}).readFile(p)
}
