package salvage

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
)

// opencode2Table is a table only OpenCode 2 databases have.
const opencode2Table = "session_v2"

// holdsOpenCode2 reports whether the file at path, or its -wal, holds the
// name of an OpenCode 2 table anywhere in its bytes. The page scan fills
// OpenCode 1.18.33's schema; when sqlite_master cannot be read, this is
// what keeps it from rebuilding an OpenCode 2 database (which sessfix
// never writes) as a 1.x one. A 1.x database holds the name only if a
// message quotes it, and then it is not salvaged either: sessfix errs on
// the side of writing nothing.
func holdsOpenCode2(path string) (bool, error) {
	for _, p := range []string{path, path + "-wal"} {
		found, err := fileContains(p, []byte(opencode2Table))
		if errors.Is(err, fs.ErrNotExist) && p != path {
			continue
		}
		if err != nil || found {
			return found, err
		}
	}
	return false, nil
}

// fileContains reads the file in chunks, overlapping by len(needle)-1
// bytes, so a match across two chunks is found.
func fileContains(path string, needle []byte) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	keep := 0
	for {
		n, err := f.Read(buf[keep:])
		if bytes.Contains(buf[:keep+n], needle) {
			return true, nil
		}
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		total := keep + n
		keep = min(len(needle)-1, total)
		copy(buf, buf[total-keep:total])
	}
}
