package shapes_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// fakeShape is a shape sessfix does not have: a directory holding a file
// named fake.store, which OpenCode keeps in its data dir. Registering it
// is all it takes for Open, Discover and OpenWriter to serve it: nothing
// in the registry or in pkg/store names a shape.
type fakeShape struct{}

func (fakeShape) Name() store.Shape { return "fake" }
func (fakeShape) Expect() string    { return "a fake store" }

func (fakeShape) Open(path string) (store.Store, error) {
	return fakeStore{info: store.Info{Shape: "fake", Path: path}}, nil
}

func (fakeShape) OpenWriter(info store.Info, _ store.WriteOptions) (store.Writer, error) {
	return fakeWriter{}, nil
}

func (fakeShape) At(dir string) []string {
	if _, err := os.Stat(filepath.Join(dir, "fake.store")); err == nil {
		return []string{dir}
	}
	return nil
}

func (fakeShape) Within(string) []string { return nil }

func (s fakeShape) InDataDir(dir, _ string) (found, looked []string) {
	return s.At(dir), []string{filepath.Join(dir, "fake.store")}
}

func (fakeShape) Superseded(dir string, _ []string) string { return dir + " holds a stale fake store" }

// fakeStore and fakeWriter only answer what the test asks.
type fakeStore struct {
	store.Store
	info store.Info
}

func (s fakeStore) Info() store.Info { return s.info }
func (fakeStore) Close() error       { return nil }

type fakeWriter struct{ store.Writer }

var errFakeApply = errors.New("the fake writer's Apply")

func (fakeWriter) Apply(context.Context, *store.ChangeSet) error { return errFakeApply }

// midChange is a writer that, in the middle of its Apply and Restore, is
// stopped at once (store.ReleaseHeld), and records the locks it left.
type midChange struct {
	store.Writer
	left *[][]string
}

func (w midChange) stop() error {
	_, left, resume := store.ReleaseHeld()
	resume()
	*w.left = append(*w.left, left)
	return nil
}

func (w midChange) Apply(context.Context, *store.ChangeSet) error { return w.stop() }
func (w midChange) Restore(context.Context, []store.Image) error  { return w.stop() }

type midChangeShape struct {
	fakeShape
	left *[][]string
}

func (s midChangeShape) OpenWriter(store.Info, store.WriteOptions) (store.Writer, error) {
	return midChange{left: s.left}, nil
}

// TestRegistryWritersMarkTheirChanges: every writer the registry opens
// marks its Apply and Restore as changes under way, so a sessfix stopped
// at once in the middle of one (a second Ctrl-C) keeps its writer locks.
func TestRegistryWritersMarkTheirChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.fake")
	l, err := store.AcquireLock(store.Info{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	var left [][]string
	reg := shapes.Registry{midChangeShape{left: &left}}
	w, err := reg.OpenWriter(store.Info{Shape: "fake", Path: path}, store.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = w.Apply(context.Background(), nil)
	_ = w.Restore(context.Background(), nil)
	if len(left) != 2 || len(left[0]) != 1 || len(left[1]) != 1 || left[0][0] != l.Path() {
		t.Errorf("stopped mid-change, the locks left were %q, want %s twice", left, l.Path())
	}
}

func TestANewShapeIsOneRegistryLine(t *testing.T) {
	reg := append(shapes.Registry{fakeShape{}}, shapes.Default...)
	home := t.TempDir()
	data := filepath.Join(home, ".local", "share", "opencode")
	storage := storetest.Materialize(t, store.ShapeStorage, data, storetest.Sample()...)
	if err := os.WriteFile(filepath.Join(data, "fake.store"), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	// Named, the directory is the fake store (At comes before the data dir).
	d, err := reg.Open([]string{data})
	if err != nil || found(d) != "fake:"+data {
		t.Fatalf("open %s: %v %v, want the fake store", data, err, d)
	}
	// Discovered, it comes first in the data dir and the storage/ tree is
	// a pre-migration copy; the built-in registry does not know it.
	d, err = reg.Discover(shapes.Env{Home: home})
	if err != nil || found(d) != "fake:"+data || !strings.Contains(strings.Join(d.Notes, "\n"), storage+" is a pre-migration copy") {
		t.Fatalf("discover: %v %v %q, want the fake store and a note on %s", err, d, d.Notes, storage)
	}
	d, err = shapes.Discover(shapes.Env{Home: home})
	if err != nil || found(d) != "storage:"+storage {
		t.Fatalf("the default registry found %v %v, want only %s", err, d, storage)
	}
	// Its writer is found by its name.
	if w, err := reg.OpenWriter(store.Info{Shape: "fake", Path: data}, store.WriteOptions{}); err != nil {
		t.Fatalf("open the fake writer: %v", err)
	} else if err := w.Apply(context.Background(), nil); !errors.Is(err, errFakeApply) {
		t.Fatalf("writer %T applied with %v, want the fake shape's", w, err)
	}
	if _, err := shapes.OpenWriter(store.Info{Shape: "fake", Path: data}, store.WriteOptions{}); !errors.Is(err, store.ErrUnsupported) {
		t.Errorf("the default registry opened a writer for a shape it does not have: %v", err)
	}
	// And a path that holds nothing says it may be one.
	if _, err := reg.Open([]string{filepath.Join(home, "nothing")}); err == nil || !strings.Contains(err.Error(), "a fake store") {
		t.Errorf("a missing path: %v, want the fake store among what a path may be", err)
	}
}
