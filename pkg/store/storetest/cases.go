package storetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
)

// Case is one rule fixture case: a directory (testdata/sessions/<name>)
// holding either session.json, an `opencode export` file materialised in
// every shape named by the optional "shapes" file (default all), or store/,
// a committed store tree opened as it is. The optional "idle" file holds how
// long the session has been quiet when it is checked (a Go duration,
// default 1h). Other files (pkg/scan's expected.txt) are the caller's.
type Case struct {
	Name string // the directory's base name
	Dir  string
	Idle time.Duration
	// Shapes are the shapes to pass to Open, one per store the case
	// stands for; a store/ tree has the single shape "" (as it is).
	Shapes []store.Shape

	fixture *Fixture // nil for a store/ tree
}

// Cases reads every case directory under root. It fails the test when
// there is none or one cannot be read.
func Cases(t testing.TB, root string) []*Case {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(root, "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("storetest: no fixture cases under %s: %v", root, err)
	}
	var out []*Case
	for _, dir := range dirs {
		c, err := loadCase(dir)
		if err != nil {
			t.Fatalf("storetest: fixture case %s: %v", dir, err)
		}
		out = append(out, c)
	}
	return out
}

func loadCase(dir string) (*Case, error) {
	c := &Case{Name: filepath.Base(dir), Dir: dir, Idle: time.Hour}
	if b, err := os.ReadFile(filepath.Join(dir, "idle")); err == nil {
		if c.Idle, err = time.ParseDuration(strings.TrimSpace(string(b))); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "store")); err == nil {
		c.Shapes = []store.Shape{""}
		return c, nil
	}
	fx, err := LoadExportFixture(filepath.Join(dir, "session.json"))
	if err != nil {
		return nil, err
	}
	c.fixture, c.Shapes = fx, Shapes
	if b, err := os.ReadFile(filepath.Join(dir, "shapes")); err == nil {
		c.Shapes = nil
		for _, s := range strings.Fields(string(b)) {
			c.Shapes = append(c.Shapes, store.Shape(s))
		}
	}
	return c, nil
}

// Open writes the case into dir (which should be empty, e.g. t.TempDir())
// and opens it with OpenOne: a store/ tree is copied as it is (shape must
// be ""), session.json is materialised in shape.
func (c *Case) Open(t testing.TB, shape store.Shape, dir string) store.Store {
	t.Helper()
	if c.fixture != nil {
		return OpenOne(t, Materialize(t, shape, dir, c.fixture))
	}
	if shape != "" {
		t.Fatalf("storetest: case %s is a committed store tree, not materialised in %s", c.Name, shape)
	}
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(c.Dir, "store"))); err != nil {
		t.Fatalf("storetest: copy %s: %v", c.Name, err)
	}
	return OpenOne(t, dir)
}
