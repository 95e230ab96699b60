//go:build !unix

package recordfile

import "os"

// Open opens a file or directory for reading.
func Open(name string) (*os.File, error) { return os.Open(name) }
