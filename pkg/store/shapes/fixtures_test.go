package shapes_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// A repository folder of fixtures is not a store, but everything in it is
// scanned: export files, sessions/ trees and databases at any depth.
func TestOpenFixtureTree(t *testing.T) {
	root := t.TempDir()
	f := storetest.Sample()
	exp := storetest.Materialize(t, store.ShapeExport, filepath.Join(root, "exports"), f[0])
	sessions := storetest.Materialize(t, store.ShapeSessions, filepath.Join(root, "stores", "a"), f...)
	db := storetest.Materialize(t, store.ShapeSQLite, filepath.Join(root, "stores", "b", "deep"), f...)
	// Noise a fixture repository holds: other JSON, a hidden dir with an
	// export in it, node_modules, an empty dir.
	must(t, os.WriteFile(filepath.Join(root, "exports", "package.json"), []byte(`{"name":"x","messages":"no"}`), 0o644))
	hidden := storetest.Materialize(t, store.ShapeExport, filepath.Join(root, ".git", "objects"), f[0])
	storetest.Materialize(t, store.ShapeExport, filepath.Join(root, "node_modules", "pkg"), f[0])
	must(t, os.MkdirAll(filepath.Join(root, "empty"), 0o755))

	d, err := shapes.Open([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	got := found(d)
	want := strings.Join([]string{"export:" + exp, "sessions:" + sessions, "sqlite:" + db}, " ")
	if got != want {
		t.Errorf("stores:\n got %s\nwant %s", got, want)
	}
	if strings.Contains(got, hidden) {
		t.Errorf("a hidden directory was searched: %s", got)
	}
	for _, n := range d.Notes {
		if strings.Contains(n, "package.json") {
			t.Errorf("a non-export .json file should be ignored silently, got note %q", n)
		}
	}
}

// A broken export file in a fixture tree is named in a note; the rest is
// still scanned.
func TestOpenFixtureTreeNotesBrokenExport(t *testing.T) {
	root := t.TempDir()
	sessions := storetest.Materialize(t, store.ShapeSessions, filepath.Join(root, "ok"), storetest.Sample()...)
	bad := filepath.Join(root, "bad.json")
	must(t, os.WriteFile(bad, []byte(`{"info": {"id": "ses_x"}, "messages": [`), 0o644))
	d, err := shapes.Open([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got := found(d); got != "sessions:"+sessions {
		t.Errorf("stores = %s", got)
	}
	if len(d.Notes) != 1 || !strings.Contains(d.Notes[0], bad) {
		t.Errorf("notes = %q, want one naming %s", d.Notes, bad)
	}
}

func TestOpenEmptyTreeIsNotFound(t *testing.T) {
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "a", "b"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "a", "notes.json"), []byte(`{"x":1}`), 0o644))
	_, err := shapes.Open([]string{root})
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), root) {
		t.Fatalf("err = %v, want ErrNotFound naming %s", err, root)
	}
}
