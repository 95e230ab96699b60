//go:build !unix

package store

import "os"

// openRead opens a file or directory for reading.
func openRead(name string) (*os.File, error) { return os.Open(name) }
