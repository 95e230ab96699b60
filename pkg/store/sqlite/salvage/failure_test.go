package salvage_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/store/sqlite/salvage"
)

// failed checks that a salvage failed with want in its error and left
// nothing in the destination's directory.
func failed(t *testing.T, src, dst string, want string) {
	t.Helper()
	rep, err := salvage.Salvage(context.Background(), src, dst)
	if err == nil || !strings.Contains(err.Error(), want) || rep != nil {
		t.Fatalf("salvage: %v (report %v), want an error with %q", err, rep, want)
	}
}

func emptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("%s holds %d files after a failed salvage, first %s", dir, len(entries), entries[0].Name())
	}
}

func TestNothingToSalvageLeavesNoFile(t *testing.T) {
	src := filepath.Join(t.TempDir(), "opencode.db")
	if err := os.WriteFile(src, bytes.Repeat([]byte("not a database "), 4000), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	failed(t, src, filepath.Join(dir, "out.db"), "no page of the file holds rows")
	emptyDir(t, dir)
}

func TestCancelledSalvageLeavesNoFile(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := salvage.Salvage(ctx, rs.Path, filepath.Join(dir, "out.db"))
	if err == nil || rep != nil {
		t.Fatalf("salvage with a cancelled context: %v, %v", err, rep)
	}
	emptyDir(t, dir)
}

func TestExistingDestinationIsRefused(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	dst := filepath.Join(t.TempDir(), "out.db")
	if err := os.WriteFile(dst, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	failed(t, rs.Path, dst, "already exists")
	if b, _ := os.ReadFile(dst); string(b) != "mine" {
		t.Errorf("the existing destination was changed: %q", b)
	}
}

// TestOpenCode2IsNeverRebuiltFromItsPages: an OpenCode 2 database whose
// header and page 1 are gone cannot be told from a 1.x one by its schema.
// Its bytes still name OpenCode 2's tables, and the salvage refuses to
// rebuild it with 1.18.33's schema: nothing is written.
func TestOpenCode2IsNeverRebuiltFromItsPages(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "opencode.db")
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "testdata", "opencode2", "native", "opencode.db"))
	if err != nil {
		t.Fatal(err)
	}
	size := 4096
	if len(b) < 2*size {
		t.Fatalf("the OpenCode 2 database is only %d bytes", len(b))
	}
	copy(b[:size], bytes.Repeat([]byte{0x5a}, size)) // the header and page 1
	if err := os.WriteFile(src, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	failed(t, src, filepath.Join(out, "salvaged.db"), "may be an OpenCode 2 database, which sessfix does not write")
	emptyDir(t, out)
}
