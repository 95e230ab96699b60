package store

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLockPath(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "opencode.db")
	if err := os.WriteFile(db, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		info Info
		want string
	}{
		{Info{Shape: ShapeSQLite, Path: db}, db + ".sessfix.lock"},
		{Info{Shape: ShapeExport, Path: "/d/s.json"}, "/d/s.json.sessfix.lock"},
		{Info{Shape: ShapeStorage, Path: dir}, filepath.Join(dir, ".sessfix.lock")},
		{Info{Shape: "a shape sessfix does not know yet", Path: dir}, filepath.Join(dir, ".sessfix.lock")},
	} {
		if got := LockPath(c.info); got != c.want {
			t.Errorf("LockPath(%v) = %s, want %s", c.info, got, c.want)
		}
	}
}

func TestLockSecondAcquireFails(t *testing.T) {
	info := Info{Shape: ShapeStorage, Path: t.TempDir()}
	l, err := AcquireLock(info)
	if err != nil {
		t.Fatal(err)
	}
	var h LockHolder
	b, _ := os.ReadFile(l.Path())
	if err := json.Unmarshal(b, &h); err != nil || h.PID != os.Getpid() || h.Host == "" || h.Version == "" || h.Started.IsZero() {
		t.Fatalf("lock file %s = %s (%v), want pid, host, start time and version", l.Path(), b, err)
	}
	_, err = AcquireLock(info)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second acquire: err = %v, want ErrLocked", err)
	}
	for _, want := range []string{"pid " + strconv.Itoa(os.Getpid()), h.Host} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to mention %q", err, want)
		}
	}
	if held := (*HeldError)(nil); !errors.As(err, &held) || held.LockFile != l.Path() || held.Holder == nil || held.Holder.PID != os.Getpid() {
		t.Errorf("err = %#v, want a HeldError naming the lock file %s and its holder", err, l.Path())
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(l.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lock file left after release: %v", err)
	}
	l2, err := AcquireLock(info)
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	l2.Release()
}

// raceAcquire has n goroutines acquire the lock at once and sorts the
// outcomes.
func raceAcquire(info Info, n int) (won []*Lock, locked int, other []error) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			l, err := AcquireLock(info)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won = append(won, l)
			case errors.Is(err, ErrLocked):
				locked++
			default:
				other = append(other, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	return won, locked, other
}

func TestLockConcurrentAcquire(t *testing.T) {
	info := Info{Shape: ShapeSQLite, Path: filepath.Join(t.TempDir(), "opencode.db")}
	const n = 16
	won, locked, other := raceAcquire(info, n)
	if len(won) != 1 || locked != n-1 || len(other) > 0 {
		t.Fatalf("%d acquired, %d refused with ErrLocked, other errors %v; want exactly one holder", len(won), locked, other)
	}
	won[0].Release()
}

// TestLockConcurrentStaleTakeover races sessfix runs that all find the
// same stale lock: exactly one may take the store over, none may remove the
// lock another has just taken.
func TestLockConcurrentStaleTakeover(t *testing.T) {
	host, _ := os.Hostname()
	const rounds, n = 200, 8
	for r := 0; r < rounds; r++ {
		info := Info{Shape: ShapeStorage, Path: t.TempDir()}
		writeLockFile(t, info, LockHolder{PID: 1 << 30, Host: host, Started: time.Now()}) // a dead holder
		won, _, other := raceAcquire(info, n)
		if len(won) != 1 || len(other) > 0 {
			t.Fatalf("round %d: %d took the stale lock over (want 1), other errors %v", r, len(won), other)
		}
		if err := won[0].Release(); err != nil {
			t.Fatalf("round %d: the holder lost its lock: %v", r, err)
		}
	}
}

func TestLockTakeoverGuard(t *testing.T) {
	host, _ := os.Hostname()
	info := Info{Shape: ShapeSQLite, Path: filepath.Join(t.TempDir(), "opencode.db")}
	writeLockFile(t, info, LockHolder{PID: 1 << 30, Host: host, Started: time.Now()}) // a dead holder
	guard := LockPath(info) + ".takeover"
	if err := os.WriteFile(guard, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// Another run is replacing the stale lock right now: wait for it.
	if _, err := AcquireLock(info); !errors.Is(err, ErrLocked) {
		t.Fatalf("with a fresh takeover guard: err = %v, want ErrLocked", err)
	}
	// A guard left by a run that died while replacing the lock.
	old := time.Now().Add(-2 * takeoverStaleAfter)
	if err := os.Chtimes(guard, old, old); err != nil {
		t.Fatal(err)
	}
	l, err := AcquireLock(info)
	if err != nil {
		t.Fatalf("with an abandoned takeover guard: %v", err)
	}
	if _, err := os.Stat(guard); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the takeover guard is left behind: %v", err)
	}
	l.Release()
}

func writeLockFile(t *testing.T, info Info, h LockHolder) {
	t.Helper()
	b, _ := json.Marshal(h)
	if err := os.WriteFile(LockPath(info), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLockStaleDetection(t *testing.T) {
	host, _ := os.Hostname()
	now := time.Now()
	cases := []struct {
		name  string
		h     LockHolder
		stale bool
	}{
		{"live holder on this host", LockHolder{PID: os.Getpid(), Host: host, Started: now}, false},
		{"dead holder on this host", LockHolder{PID: 1 << 30, Host: host, Started: now}, true},
		{"fresh holder on another host", LockHolder{PID: 1 << 30, Host: "elsewhere", Started: now}, false},
		{"old holder on another host", LockHolder{PID: 1 << 30, Host: "elsewhere", Started: now.Add(-LockStaleAfter - time.Hour)}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			info := Info{Shape: ShapeSessions, Path: t.TempDir()}
			writeLockFile(t, info, c.h)
			l, err := AcquireLock(info)
			if c.stale {
				if err != nil {
					t.Fatalf("stale lock not replaced: %v", err)
				}
				if l.Holder.PID != os.Getpid() {
					t.Fatalf("holder = %+v", l.Holder)
				}
				l.Release()
				return
			}
			if !errors.Is(err, ErrLocked) {
				t.Fatalf("err = %v, want ErrLocked", err)
			}
		})
	}
}

func TestLockUnreadableFileIsHonouredWhileFresh(t *testing.T) {
	info := Info{Shape: ShapeStorage, Path: t.TempDir()}
	if err := os.WriteFile(LockPath(info), []byte("{trunc"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := AcquireLock(info); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "unreadable") {
		t.Fatalf("err = %v, want ErrLocked saying the lock is unreadable", err)
	}
	old := time.Now().Add(-LockStaleAfter - time.Hour)
	os.Chtimes(LockPath(info), old, old)
	l, err := AcquireLock(info)
	if err != nil {
		t.Fatalf("an old unreadable lock was not replaced: %v", err)
	}
	l.Release()
}

func TestLockReleaseLeavesAReplacedLock(t *testing.T) {
	info := Info{Shape: ShapeStorage, Path: t.TempDir()}
	l, err := AcquireLock(info)
	if err != nil {
		t.Fatal(err)
	}
	// Someone judged it stale and took over.
	writeLockFile(t, info, LockHolder{PID: 77, Host: "elsewhere", Started: time.Now()})
	if err := l.Release(); err == nil || !strings.Contains(err.Error(), "replaced") {
		t.Fatalf("err = %v, want a refusal to remove another sessfix's lock", err)
	}
	if _, err := os.Stat(LockPath(info)); err != nil {
		t.Fatalf("the other sessfix's lock was removed: %v", err)
	}
}

// TestReleaseHeldNeverInTheMiddleOfAChange: a second Ctrl-C while a change
// is under way (Writing) releases no lock, so no other sessfix can take
// the store while it is half written; between changes it releases every
// lock, and no change can begin afterwards until resume.
func TestReleaseHeldNeverInTheMiddleOfAChange(t *testing.T) {
	dir := t.TempDir()
	l, err := AcquireLock(Info{Path: filepath.Join(dir, "a.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	path := l.Path()

	done := Writing()
	released, left, resume := ReleaseHeld()
	resume()
	if len(released) != 0 || len(left) != 1 || left[0] != path {
		t.Errorf("mid-change: released %q, left %q; want only %s left", released, left, path)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("mid-change: the lock was removed (%v)", err)
	}
	if _, err := AcquireLock(Info{Path: filepath.Join(dir, "a.db")}); !errors.Is(err, ErrLocked) {
		t.Fatalf("mid-change: another writer got in: %v", err)
	}
	done()

	released, left, resume = ReleaseHeld()
	if len(released) != 1 || released[0] != path || len(left) != 0 {
		t.Errorf("between changes: released %q, left %q; want %s released", released, left, path)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("between changes: the lock is left (%v)", err)
	}
	if writing.TryRLock() {
		writing.RUnlock()
		t.Error("a change may begin after the locks were released")
	}
	resume()
	if !writing.TryRLock() {
		t.Fatal("no change may begin after resume")
	}
	writing.RUnlock()
	if err := l.Release(); err != nil {
		t.Errorf("the command's own release afterwards: %v", err)
	}
}
