package store

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessfix/sessfix/internal/atomicfile"
	"github.com/sessfix/sessfix/internal/plural"
)

// Temps lists the temporary files a sessfix left in a store when it was
// killed while replacing a file (atomicfile's ".sessfix-*.tmp"): anywhere
// in a store that is a directory, and for a store that is a file (an
// export, a database) only those written to replace that file, in its
// directory. OpenCode and sessfix's readers ignore them.
func Temps(info Info) []string {
	if fi, err := os.Stat(info.Path); err == nil && fi.IsDir() {
		return atomicfile.Temps(info.Path)
	}
	return atomicfile.TempsOf(info.Path)
}

// sweepTemps removes the temporary files of a store (Temps). The caller
// holds the store's writer lock, so no live sessfix is writing them. It
// returns what it removed.
func sweepTemps(info Info) []string {
	var removed []string
	for _, p := range Temps(info) {
		if os.Remove(p) == nil {
			removed = append(removed, p)
		}
	}
	if len(removed) > 0 {
		dirs := map[string]bool{}
		for _, p := range removed {
			dirs[filepath.Dir(p)] = true
		}
		for d := range dirs {
			_ = atomicfile.SyncDir(d)
		}
	}
	return removed
}

// TempNote is the note a reader adds to its store's Info when it saw
// sessfix's temporary files (temps, absolute paths) in it: how many, which,
// and how they go away. It is "" when there are none, or when a live
// sessfix holds the store's writer lock: they may be that run's own files,
// still being written.
func TempNote(info Info, temps []string) string {
	if len(temps) == 0 {
		return ""
	}
	lock := lockState(info)
	if lock == lockHeld {
		return ""
	}
	shown := make([]string, 0, 3)
	for _, p := range temps[:min(len(temps), 3)] {
		if rel, err := filepath.Rel(info.Path, p); err == nil && !strings.HasPrefix(rel, "..") {
			p = rel
		}
		shown = append(shown, p)
	}
	list := strings.Join(shown, ", ")
	if more := len(temps) - len(shown); more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	n := len(temps)
	note := fmt.Sprintf("%s left by a sessfix that was killed while writing (%s): %s; ",
		plural.Count(n, "temporary file", "temporary files"), plural.Word(n, "OpenCode ignores it", "OpenCode ignores them"), list)
	if lock == lockAbandoned {
		note += "the next `sessfix fix` or `sessfix undo` on this store removes " + plural.Word(n, "it", "them") + ", or remove "
	} else {
		note += "remove "
	}
	return note + plural.Word(n, "it", "them") + " with: " + removeCommand(info)
}

// removeCommand is a shell command that removes a store's temporary files.
func removeCommand(info Info) string {
	if fi, err := os.Stat(info.Path); err == nil && fi.IsDir() {
		return "find " + ShellArg(info.Path) + " -name '.sessfix-*.tmp' -type f -delete"
	}
	return "rm -f -- " + ShellArg(filepath.Dir(info.Path)) + "/" + ShellArg(atomicfile.TempPrefix(info.Path)) + "*.tmp"
}

// ShellArg is s as one word of a POSIX shell command line: as it is when
// no shell treats any of its characters specially, else in single quotes.
// The commands sessfix prints for a user to run quote paths with it.
func ShellArg(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./@%+=:,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

type lockStatus int

const (
	lockFree      lockStatus = iota // no lock file
	lockHeld                        // held by a sessfix that may be running
	lockAbandoned                   // left by a sessfix that died; the next writer replaces it
)

// lockState says whether a store's writer lock is free, held or stale, as
// AcquireLock would judge it, without taking it.
func lockState(info Info) lockStatus {
	path := LockPath(info)
	b, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return lockFree
		}
		return lockHeld
	}
	var h LockHolder
	jerr := json.Unmarshal(b, &h)
	var mtime time.Time
	if fi, err := os.Stat(path); err == nil {
		mtime = fi.ModTime()
	}
	host, _ := os.Hostname()
	if stale, _ := lockStale(h, jerr, mtime, host, time.Now()); stale {
		return lockAbandoned
	}
	return lockHeld
}
