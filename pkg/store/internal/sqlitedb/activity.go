package sqlitedb

import (
	"path/filepath"

	"github.com/sessfix/sessfix/internal/holders"
	"github.com/sessfix/sessfix/pkg/store"
)

// SQLite's locks in the -shm file of a WAL database (wal.c): the writer
// lock, the checkpointer lock and the recovery lock are bytes 120, 121 and
// 122; every open connection holds a shared lock on byte 128 (the DMS
// lock) for as long as it is open.
const (
	shmWriteFirst = 120
	shmWriteLast  = 122
)

// Activity reports whether another program uses the database at path (a
// 1.x or an OpenCode 2 database alike), from the
// locks the operating system lists (internal/holders), never by opening or
// locking it: a write lock on the database file, or on the WAL writer,
// checkpointer or recovery byte of its -shm file, is a write in progress;
// any other lock on either (OpenCode 1.18.33 holds a shared lock on the
// database file's shared range and on the -shm DMS byte from start to exit,
// streaming or idle), or the database or its -wal or -shm file open in
// another process, means it has the database open.
func Activity(path string) store.Activity {
	// Other processes' open files are absolute (/proc/PID/fd): so is the
	// path compared with them, whatever the user named.
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	db, shm := path, path+"-shm"
	locks, ok := holders.Locks(db, shm)
	if !ok {
		return store.Activity{State: store.ActivityUnknown}
	}
	a := store.Activity{State: store.ActivityNone}
	for _, l := range locks {
		state := store.ActivityOpen
		if l.Write && (l.File == db || l.Start <= shmWriteLast && (l.End < 0 || l.End >= shmWriteFirst)) {
			state = store.ActivityWriting
		}
		if state > a.State || a.PID <= 0 && l.PID > 0 {
			a = store.Activity{State: max(state, a.State), PID: l.PID}
		}
	}
	if a.State == store.ActivityNone {
		procs, _ := holders.Open(func(p string) bool { return p == db || p == db+"-wal" || p == shm })
		if len(procs) > 0 {
			a = store.Activity{State: store.ActivityOpen, PID: procs[0].PID}
		}
	}
	if a.PID > 0 {
		a.Command = holders.Command(a.PID)
	}
	return a
}

// Activity: what is seen of other programs using the database (Activity).
func (s *V1) Activity() store.Activity { return Activity(s.path) }
