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
	} else if _, ok := w.(fakeWriter); !ok {
		t.Fatalf("writer %T, want the fake shape's", w)
	}
	if _, err := shapes.OpenWriter(store.Info{Shape: "fake", Path: data}, store.WriteOptions{}); !errors.Is(err, store.ErrUnsupported) {
		t.Errorf("the default registry opened a writer for a shape it does not have: %v", err)
	}
	// And a path that holds nothing says it may be one.
	if _, err := reg.Open([]string{filepath.Join(home, "nothing")}); err == nil || !strings.Contains(err.Error(), "a fake store") {
		t.Errorf("a missing path: %v, want the fake store among what a path may be", err)
	}
}
