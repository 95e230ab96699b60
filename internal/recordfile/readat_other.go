//go:build !(linux || darwin)

package recordfile

import (
	"os"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
)

// OpenAt says ReadAt cannot open files relative to a directory here:
// directories are not held open and ReadAt is never called.
const OpenAt = false

// ReadAt reads the record file by path.
func ReadAt(dir *os.File, name, p string) ([]byte, time.Time, *store.ParseError) {
	return Read(p, nil)
}
