package jsonfs

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/sessfix/sessfix/internal/holders"
	"github.com/sessfix/sessfix/pkg/store"
)

// activity reports whether another program has a file open under home, the
// directory OpenCode keeps the store and its log in. OpenCode writes JSON
// records by replacing whole files and holds none of them open, but it
// keeps its log open under its data dir for as long as it runs (1.1.65:
// log/<time>.log), so that is the evidence that it runs on this store.
func activity(home string) store.Activity {
	if r, err := filepath.EvalSymlinks(home); err == nil {
		home = r
	}
	// Other processes' open files are absolute (/proc/PID/fd), whatever
	// the user named the store ("storage", "./data/storage").
	if abs, err := filepath.Abs(home); err == nil {
		home = abs
	}
	procs, ok := holders.Open(func(p string) bool {
		return p == home || strings.HasPrefix(p, home+string(os.PathSeparator))
	})
	switch {
	case !ok:
		return store.Activity{State: store.ActivityUnknown}
	case len(procs) == 0:
		return store.Activity{State: store.ActivityNone}
	}
	return store.Activity{State: store.ActivityOpen, PID: procs[0].PID, Command: procs[0].Command}
}

// Activity: OpenCode 1.0–1.1 has storage/'s data dir open while it runs.
func (s *storageStore) Activity() store.Activity { return activity(filepath.Dir(s.dir)) }

// Activity: the data dir of <data>/project/<slug>/storage is <data>.
func (s *projectStore) Activity() store.Activity {
	home := filepath.Dir(s.dir)
	if p := filepath.Dir(home); filepath.Base(p) == "project" {
		home = filepath.Dir(p)
	}
	return activity(home)
}

// Activity: the sessions layout lives in ~/.opencode.
func (s *sessionsStore) Activity() store.Activity { return activity(filepath.Dir(s.dir)) }
