package store

import (
	"errors"
	"strings"
	"testing"
)

// TestErrorsSayItOnce: the typed errors are the sentinels they stand for,
// and their messages say what happened without the sentinel's own words
// tacked on.
func TestErrorsSayItOnce(t *testing.T) {
	for _, c := range []struct {
		err      error
		sentinel error
		want     string
	}{
		{Changed("/s/p.json", KindPart, "prt_1", "was modified"), ErrChanged, "part prt_1 in /s/p.json was modified since the scan"},
		{&HeldError{Store: "/s", LockFile: "/s/.sessfix.lock"}, ErrLocked, "/s is being repaired by another sessfix (lock file /s/.sessfix.lock is unreadable)"},
		{&BusyError{Path: "/d/opencode.db", Doing: "write", Err: errors.New("database is locked (5) (SQLITE_BUSY)")}, ErrLocked,
			"cannot write /d/opencode.db: the database stayed locked by another program (usually a running OpenCode)"},
		{NotFoundf("%s is not an sqlite database", "/x.db"), ErrNotFound, "/x.db is not an sqlite database"},
		{Unsupportedf("%s is too new", "/x.db"), ErrUnsupported, "/x.db is too new"},
	} {
		if !errors.Is(c.err, c.sentinel) {
			t.Errorf("%v is not %v", c.err, c.sentinel)
		}
		if got := c.err.Error(); got != c.want || strings.Contains(got, c.sentinel.Error()) {
			t.Errorf("message %q, want %q", got, c.want)
		}
	}
}
