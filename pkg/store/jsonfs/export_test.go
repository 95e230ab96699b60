package jsonfs

import (
	"os"

	"github.com/sessfix/sessfix/pkg/store"
)

// OpenSessionsWithOpener opens a sessions/ dir whose files are opened with
// open, to inject failures a test running as root cannot provoke. A hook
// for the external tests (package jsonfs_test).
func OpenSessionsWithOpener(dir string, open func(string) (*os.File, error)) (store.Store, error) {
	s, err := openSessions(dir)
	if err != nil {
		return nil, err
	}
	s.fs.open = open
	return s, nil
}
