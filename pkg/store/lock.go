package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"sync"
	"syscall"
	"time"
)

// Version is the sessfix version recorded in writer locks and backups.
// The command sets it from its build (cmd.Run); when empty, the module's
// build info is used.
var Version = ""

// SessfixVersion returns Version, else the module version in the binary's
// build info, else "dev" (as `sessfix version` says for a development
// build).
func SessfixVersion() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// LockStaleAfter is the age after which a writer lock counts as abandoned
// even when its holder cannot be checked (another host, or Windows).
var LockStaleAfter = 12 * time.Hour

// LockHolder is what a lock file records about the sessfix that holds it.
type LockHolder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Started time.Time `json:"started"`
	Version string    `json:"version"`
}

// Lock is a held sessfix writer lock on one store.
type Lock struct {
	path    string
	content []byte
	Holder  LockHolder
	// Swept are the temporary files the sessfix whose stale lock this one
	// replaced had left in the store (Temps), removed when the lock was
	// taken.
	Swept []string
}

// LockPath returns where the writer lock of a store lives: inside a store
// that is a directory (<dir>/.sessfix.lock), next to one that is a file, a
// database or an export file (<file>.sessfix.lock). Readers skip both
// names. A path that does not exist (yet) counts as a file.
func LockPath(info Info) string {
	if fi, err := os.Stat(info.Path); err == nil && fi.IsDir() {
		return filepath.Join(info.Path, ".sessfix.lock")
	}
	return info.Path + ".sessfix.lock"
}

// Path is the lock file.
func (l *Lock) Path() string { return l.path }

// AcquireLock takes the sessfix writer lock of a store: one sessfix writes a
// store at a time. The lock file is created exclusively and records the pid,
// host, start time and sessfix version. A lock left by a sessfix that died
// (same host, pid gone) or older than LockStaleAfter is replaced, by one run
// at a time (removeStale); the temporary files such a sessfix left in the
// store (Temps) are removed then, since no live sessfix is writing them
// (Lock.Swept). When the lock is held, the error wraps ErrLocked and says
// who holds it.
func AcquireLock(info Info) (*Lock, error) {
	return acquireLock(info, time.Now())
}

func acquireLock(info Info, now time.Time) (*Lock, error) {
	path := LockPath(info)
	host, _ := os.Hostname()
	h := LockHolder{PID: os.Getpid(), Host: host, Started: now.UTC().Truncate(time.Second), Version: SessfixVersion()}
	content, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return nil, err
	}
	content = append(content, '\n')
	replaced := false
	for attempt := 0; attempt < 3; attempt++ {
		err := createExclusive(path, content)
		if err == nil {
			l := &Lock{path: path, content: content, Holder: h}
			if replaced {
				l.Swept = sweepTemps(info)
			}
			held.add(l)
			return l, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, WriteFailed(&kindError{err: fmt.Errorf("cannot create the sessfix lock %s: %v", path, pathCause(err)), kind: err}, true)
		}
		old, rerr := os.ReadFile(path)
		if errors.Is(rerr, fs.ErrNotExist) {
			continue // released meanwhile
		}
		if rerr != nil {
			return nil, fmt.Errorf("cannot read the sessfix lock %s: %w", path, rerr)
		}
		var holder LockHolder
		jerr := json.Unmarshal(old, &holder)
		var mtime time.Time
		if fi, err := os.Stat(path); err == nil {
			mtime = fi.ModTime()
		}
		stale, why := lockStale(holder, jerr, mtime, host, now)
		if !stale {
			held := &HeldError{Store: info.Path, LockFile: path}
			if jerr == nil && holder.PID > 0 {
				held.Holder = &holder
			}
			return nil, held
		}
		if err := removeStale(path, old, why); err != nil {
			return nil, err
		}
		replaced = true
	}
	return nil, fmt.Errorf("%s: another sessfix took the writer lock %s while a stale one was replaced: %w", info.Path, path, ErrLocked)
}

// takeoverStaleAfter is the age after which a takeover guard counts as left
// by a sessfix that died while replacing a stale lock (which takes a few
// system calls).
const takeoverStaleAfter = 30 * time.Second

// removeStale removes the stale lock at path, but only if it still holds
// old, and only while holding the takeover guard (path + ".takeover",
// created exclusively). Without the guard, two runs that read the same
// stale lock could both compare it, and the slower one would then remove
// the lock the faster one had just taken. A busy guard means another run is
// replacing the lock: the caller's next attempt finds that run's lock.
func removeStale(path string, old []byte, why string) error {
	guard := path + ".takeover"
	if err := createExclusive(guard, nil); err != nil {
		if !errors.Is(err, fs.ErrExist) {
			return WriteFailed(fmt.Errorf("cannot replace the stale sessfix lock %s (%s): %w", path, why, err), true)
		}
		if fi, err := os.Stat(guard); err == nil && time.Since(fi.ModTime()) > takeoverStaleAfter {
			_ = os.Remove(guard)
		}
		return nil
	}
	defer os.Remove(guard)
	if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, old) {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cannot remove the stale sessfix lock %s (%s): %w", path, why, err)
		}
	}
	return nil
}

func createExclusive(path string, content []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(content)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
	}
	return err
}

// lockStale decides whether a lock file can be taken over, and why.
func lockStale(h LockHolder, parseErr error, mtime time.Time, host string, now time.Time) (bool, string) {
	switch {
	case parseErr != nil || h.PID <= 0:
		// An unreadable lock file: a sessfix died while writing it, or
		// someone else wrote it. Honour it only while it is fresh.
		if !mtime.IsZero() && now.Sub(mtime) > LockStaleAfter {
			return true, fmt.Sprintf("unreadable and older than %v", LockStaleAfter)
		}
		return false, ""
	case !h.Started.IsZero() && now.Sub(h.Started) > LockStaleAfter:
		return true, fmt.Sprintf("older than %v", LockStaleAfter)
	case h.Host == host && !processAlive(h.PID):
		return true, fmt.Sprintf("pid %d is not running", h.PID)
	}
	return false, ""
}

// processAlive reports whether a process with pid exists on this host. On
// systems where that cannot be checked it answers true.
func processAlive(pid int) bool {
	if runtime.GOOS == "windows" {
		return true
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Release removes the lock file if it is still this lock's.
func (l *Lock) Release() error {
	if l == nil {
		return nil
	}
	// Under the registry's mutex: ReleaseHeld may release it meanwhile.
	held.mu.Lock()
	defer held.mu.Unlock()
	delete(held.locks, l)
	return l.release()
}

func (l *Lock) release() error {
	if l.path == "" {
		return nil
	}
	cur, err := os.ReadFile(l.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		l.path = ""
		return nil
	case err != nil:
		return fmt.Errorf("release the sessfix lock %s: %w", l.path, err)
	case !bytes.Equal(cur, l.content):
		path := l.path
		l.path = ""
		return fmt.Errorf("release the sessfix lock %s: it was replaced by another sessfix; left it in place", path)
	}
	err = os.Remove(l.path)
	l.path = ""
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("release the sessfix lock: %w", err)
	}
	return nil
}

// heldLocks are the writer locks this process holds, for ReleaseHeld.
type heldLocks struct {
	mu    sync.Mutex
	locks map[*Lock]bool
}

var held heldLocks

func (h *heldLocks) add(l *Lock) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.locks == nil {
		h.locks = map[*Lock]bool{}
	}
	h.locks[l] = true
}

// writing is held shared by every change this process makes to a store
// (Writing), and taken for good by ReleaseHeld: no writer lock is removed
// while its store may still be changing, and no change begins after.
var writing sync.RWMutex

// Writing marks a change to a store under way until done is called.
// ReleaseHeld releases no lock meanwhile; once it has released them,
// Writing blocks until the process has ended. The writers the shape
// registry opens call it around Apply and Restore.
func Writing() (done func()) {
	writing.RLock()
	return writing.RUnlock
}

// ReleaseHeld stops this process's changes to stores for good, for a
// process about to end at once (a second Ctrl-C) without returning through
// the code that holds its locks. When no change is under way (Writing),
// none begins from now on, every writer lock the process holds is
// released, and released lists their files: each store holds whole change
// sets (a backup run cut short between two is undone as any other). When a
// change is under way, nothing is released and left lists the lock files:
// they stay until the process has ended, and the next sessfix replaces
// them as stale (sweeping any temporary file of the interrupted write);
// the change set is left half written for undo, which knows what each
// record held before and what the run was writing. resume lets changes
// begin again: a process that ends does not call it.
func ReleaseHeld() (released, left []string, resume func()) {
	held.mu.Lock()
	defer held.mu.Unlock()
	if !writing.TryLock() {
		for l := range held.locks {
			if l.path != "" {
				left = append(left, l.path)
			}
		}
		sort.Strings(left)
		return nil, left, func() {}
	}
	for l := range held.locks {
		path := l.path
		if l.release() == nil && path != "" {
			released = append(released, path)
		}
		delete(held.locks, l)
	}
	sort.Strings(released)
	return released, nil, writing.Unlock
}
