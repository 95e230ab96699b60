//go:build linux || darwin

package recordfile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
)

// TestReadAt reads records relative to a held directory and checks every
// outcome against what reading by path gives.
func TestReadAt(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte(`{"text":"0123456789abcdef"}`), 40000) // > one read's worth
	if err := os.WriteFile(filepath.Join(dir, "big.json"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "empty.json"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	mtime := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	if err := os.Chtimes(filepath.Join(dir, "big.json"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	for _, c := range []struct{ name, reason string }{
		{"big.json", ""}, {"empty.json", ""}, {"sub.json", "is a directory"},
		{"fifo.json", "not a regular file"}, {"gone.json", "vanished"},
	} {
		p := filepath.Join(dir, c.name)
		done := make(chan struct{})
		var got []byte
		var mod time.Time
		var perr *store.ParseError
		go func() { got, mod, perr = ReadAt(d, c.name, p); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: ReadAt blocked", c.name)
		}
		if c.reason != "" {
			if perr == nil || perr.Reason != c.reason || !strings.Contains(perr.Detail, p) {
				t.Errorf("%s: error %v, want %q naming %s", c.name, perr, c.reason, p)
			}
			continue
		}
		want, wmod, werr := Read(p, nil)
		if perr != nil || werr != nil {
			t.Fatalf("%s: %v / by path %v", c.name, perr, werr)
		}
		if !bytes.Equal(got, want) || !mod.Equal(wmod) {
			t.Errorf("%s: %d bytes at %v, by path %d bytes at %v", c.name, len(got), mod, len(want), wmod)
		}
	}
	if _, mod, _ := ReadAt(d, "big.json", filepath.Join(dir, "big.json")); !mod.Equal(mtime) {
		t.Errorf("mtime %v, want %v", mod, mtime)
	}
}
