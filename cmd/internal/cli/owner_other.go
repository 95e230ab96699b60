//go:build !unix

package cli

import "io/fs"

// fileOwner is not known where files have no uid.
func fileOwner(fs.FileInfo) (int, bool) { return 0, false }
