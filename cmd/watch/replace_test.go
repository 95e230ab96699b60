package watch_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
	"github.com/sessfix/sessfix/pkg/watch"
)

// deletedOpen lists the deleted files under dir that process pid still
// holds open (Linux: its /proc/PID/fd links ending in " (deleted)").
func deletedOpen(t *testing.T, pid int, dir string) []string {
	t.Helper()
	if runtime.GOOS != "linux" {
		return nil // no /proc to look at; the repair assertions still hold
	}
	fdDir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	fds, err := os.ReadDir(fdDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, fd := range fds {
		l, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
		if err == nil && strings.HasPrefix(l, dir) && strings.HasSuffix(l, " (deleted)") {
			out = append(out, l)
		}
	}
	return out
}

func warned(p *watchProc, substr string) func(received) bool {
	return func(e received) bool { return e.Kind == watch.Warning && strings.Contains(e.Message, substr) }
}

// TestWatchFollowsAReplacedDatabase is the user's story: `sessfix watch
// DIR` runs, opencode.db is replaced (mv other.db opencode.db) by one
// with a broken session. watch says the store was replaced, repairs the
// session in the new file, and no longer holds the old one open.
func TestWatchFollowsAReplacedDatabase(t *testing.T) {
	t.Parallel()
	healthy, broken := fixture(t, "tool-loop-negative"), fixture(t, "preflight-blank-text")
	dir := t.TempDir()
	db := storetest.Materialize(t, store.ShapeSQLite, dir, healthy)
	p := startWatch(t, t.TempDir(), dir)
	p.wait(func(e received) bool { return e.Kind == watch.Checked && e.Session == healthy.ID }, time.Minute, "checked")

	other := storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), healthy, broken)
	if err := os.Rename(other, db); err != nil {
		t.Fatal(err)
	}
	p.wait(warned(p, "replaced"), time.Minute, "replaced warning")
	p.wait(func(e received) bool { return e.Kind == watch.Repaired && e.Session == broken.ID }, time.Minute, "repaired")
	if left := fixableNow(t, db, broken.ID); len(left) > 0 {
		t.Errorf("the new database still has %v", left)
	}
	if held := deletedOpen(t, p.cmd.Process.Pid, dir); len(held) > 0 {
		t.Errorf("watch still holds the replaced database open: %v", held)
	}
	if err := p.stop(syscall.SIGTERM); err != nil {
		t.Error(err)
	}
}

// TestWatchWaitsForTheFirstStore: watch started on a data dir that does
// not exist yet (OpenCode never ran) does not exit; it says once that it
// waits, and repairs the database OpenCode's first run creates.
func TestWatchWaitsForTheFirstStore(t *testing.T) {
	t.Parallel()
	broken := fixture(t, "preflight-blank-text")
	dir := filepath.Join(t.TempDir(), "opencode")
	p := startWatch(t, t.TempDir(), dir)
	p.wait(warned(p, "no store found yet"), time.Minute, "waiting warning")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	other := storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), broken)
	if err := os.Rename(other, filepath.Join(dir, "opencode.db")); err != nil {
		t.Fatal(err)
	}
	p.wait(func(e received) bool { return e.Kind == watch.StoreFound }, time.Minute, "store-found")
	p.wait(func(e received) bool { return e.Kind == watch.Repaired && e.Session == broken.ID }, time.Minute, "repaired")
	if n := len(p.all(watch.Warning, "")); n != 1 {
		t.Errorf("%d warnings, want the one that watch waits", n)
	}
	if err := p.stop(syscall.SIGTERM); err != nil {
		t.Error(err)
	}
}

// TestWatchFollowsASwappedStorageDir: the same for a JSON data dir whose
// storage/ directory is moved away and another put in its place.
func TestWatchFollowsASwappedStorageDir(t *testing.T) {
	t.Parallel()
	healthy, broken := fixture(t, "tool-loop-negative"), fixture(t, "preflight-blank-text")
	dir := t.TempDir()
	storage := storetest.Materialize(t, store.ShapeStorage, dir, healthy)
	p := startWatch(t, t.TempDir(), dir)
	p.wait(func(e received) bool { return e.Kind == watch.Checked && e.Session == healthy.ID }, time.Minute, "checked")

	other := storetest.Materialize(t, store.ShapeStorage, t.TempDir(), healthy, broken)
	if err := os.Rename(storage, storage+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, storage); err != nil {
		t.Fatal(err)
	}
	p.wait(func(e received) bool { return e.Kind == watch.Repaired && e.Session == broken.ID }, time.Minute, "repaired")
	if left := fixableNow(t, storage, broken.ID); len(left) > 0 {
		t.Errorf("the new storage/ still has %v", left)
	}
	if n := len(p.all(watch.Repaired, "")); n != 1 {
		t.Errorf("%d repairs, want the one in the new storage/", n)
	}
	if err := p.stop(syscall.SIGTERM); err != nil {
		t.Error(err)
	}
}
