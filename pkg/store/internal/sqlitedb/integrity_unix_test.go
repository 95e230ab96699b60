//go:build unix

package sqlitedb

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A mapped page whose file was cut short faults (SIGBUS): catchFault
// turns that into an error instead of a crash.
func TestCatchFaultTurnsAGoneMappedPageIntoAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	page := os.Getpagesize()
	if err := os.WriteFile(path, make([]byte, 2*page), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := syscall.Mmap(int(f.Fd()), 0, 2*page, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	var b byte
	fault := catchFault(func() { b = m[page] })
	if fault == nil {
		t.Fatalf("reading a mapped page past the end of the file gave %d, no fault", b)
	}
	if fault := catchFault(func() {}); fault != nil {
		t.Errorf("no fault: %v", fault)
	}
}

// RunCheck maps the file on a connection of its own and gives it back to
// the pool as it was: a writer's single connection keeps no mmap_size.
func TestRunCheckLeavesTheConnectionUnmapped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE t(a); INSERT INTO t VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	if err := RunCheck(context.Background(), db, path, "quick_check"); err != nil {
		t.Fatalf("check of a healthy database: %v", err)
	}
	var size int64
	if err := db.QueryRow(`PRAGMA mmap_size`).Scan(&size); err != nil || size != 0 {
		t.Errorf("mmap_size after the check: %d, %v; want 0", size, err)
	}
}
