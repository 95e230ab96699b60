package shapes

import (
	"fmt"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/export"
	"github.com/sessfix/sessfix/pkg/store/jsonfs"
	"github.com/sessfix/sessfix/pkg/store/sqlite"
	"github.com/sessfix/sessfix/pkg/store/sqlite2"
)

// Default is every shape sessfix reads, in the order paths are matched
// against them: where two shapes could claim a path, or an OpenCode data
// dir holds stores of several, the earlier one wins. A new shape is one
// package under pkg/store and one line here.
var Default = Registry{
	sqlite2.Shape{},   // OpenCode 2: opencode.db with session_v2 (read only)
	sqlite.Shape{},    // OpenCode 1.2 – 1.18: opencode.db
	jsonfs.Storage{},  // OpenCode 1.0–1.1: <data>/storage
	jsonfs.Sessions{}, // ~/.opencode/sessions and fixture trees
	jsonfs.Project{},  // OpenCode ≤ 0.5: <data>/project/<slug>/storage
	export.Shape{},    // `opencode export` files
}

// A Shape is one storage shape: the package under pkg/store that reads and
// writes one on-disk layout. Besides opening its stores, a shape says how
// its stores are found, through the interfaces below it implements: a
// store kept in directories (DirShape), in one file (FileShape), in
// OpenCode's data dir (DataDirShape) or in the home directory (HomeShape).
type Shape interface {
	// Name is the Info.Shape of the stores it opens.
	Name() store.Shape
	// Expect says what a user names to open such a store ("an opencode.db
	// file"), for the error about a path that holds no store.
	Expect() string
	// Open opens the store at path, a path the shape found.
	Open(path string) (store.Store, error)
	// OpenWriter opens the writer of a store of the shape. It needs only
	// the store's Info, so undo can write a store without reading it.
	OpenWriter(info store.Info, opts store.WriteOptions) (store.Writer, error)
}

// A DirShape keeps its stores in directories.
type DirShape interface {
	Shape
	// At returns the store dir unmistakably is (or names, as the parent of
	// the store's own directory). It is asked before dir is taken for an
	// OpenCode data dir.
	At(dir string) []string
	// Within returns the stores dir holds when it is not an OpenCode data
	// dir (a sessions/ child, the trees of a project/ dir).
	Within(dir string) []string
}

// A FileShape keeps a store in one file.
type FileShape interface {
	Shape
	// Match reports whether the regular file at path is a store of the
	// shape. When it is not, not says what it is not ("not an sqlite
	// database"); err is set when the file cannot be read.
	Match(path string) (ok bool, not string, err error)
	// Candidate reports whether a file met while searching a fixture tree
	// may be a store of the shape, and is worth opening (even to name its
	// damage).
	Candidate(path string) bool
}

// A DataDirShape is a store OpenCode keeps in its data dir. In one data
// dir, the stores of the first shape (in registry order) that has any are
// read, and those of the later shapes are pre-migration copies OpenCode no
// longer reads: a note says so.
type DataDirShape interface {
	Shape
	// InDataDir returns the shape's stores in the data dir, and every
	// place it looked (for the error when nothing is found). db is
	// $OPENCODE_DB, the database path OpenCode was told to use ("" when
	// unset).
	InDataDir(dir, db string) (found, looked []string)
	// Superseded is the note for found, the shape's stores in dir, when a
	// shape before it in the registry has stores there too.
	Superseded(dir string, found []string) string
}

// A ReadOnlyShape is a shape sessfix reads but never writes: its
// OpenWriter always refuses.
type ReadOnlyShape interface {
	Shape
	// ReadOnly is the error OpenWriter returns for the store (a
	// *store.ReadOnlyError).
	ReadOnly(info store.Info) error
}

// A HomeShape is a store kept under the user's home directory, outside
// OpenCode's data dir.
type HomeShape interface {
	Shape
	// InHome returns the shape's stores under home, and where it looked.
	InHome(home string) (found, looked []string)
}

// Registry is a list of shapes, in matching order (see Default).
type Registry []Shape

// OpenWriter returns the writer of a store, by its shape. It needs only the
// store's Info, so undo can write a store without reading it. Its Apply
// and Restore are changes under way (store.Writing) while they run.
func (r Registry) OpenWriter(info store.Info, opts store.WriteOptions) (store.Writer, error) {
	for _, sh := range r {
		if sh.Name() == info.Shape {
			w, err := sh.OpenWriter(info, opts)
			if err != nil {
				return nil, err
			}
			return gated{w}, nil
		}
	}
	return nil, fmt.Errorf("cannot write %s: unknown store shape %q: %w", info.Path, info.Shape, store.ErrUnsupported)
}

// CheckWritable returns the refusal a store's writer would give when its
// shape is one sessfix never writes (ReadOnlyShape), without opening
// anything; nil otherwise. Commands that repair ask it before they plan.
func (r Registry) CheckWritable(info store.Info) error {
	for _, sh := range r {
		if sh.Name() == info.Shape {
			if ro, ok := sh.(ReadOnlyShape); ok {
				return ro.ReadOnly(info)
			}
			return nil
		}
	}
	return nil
}

// CheckWritable is Default.CheckWritable.
func CheckWritable(info store.Info) error { return Default.CheckWritable(info) }

// OpenWriter is Default.OpenWriter.
func OpenWriter(info store.Info, opts store.WriteOptions) (store.Writer, error) {
	return Default.OpenWriter(info, opts)
}

// expected is the list of what an explicit path may be, for errors.
func (r Registry) expected() string {
	out := "expected an opencode data dir"
	for i, sh := range r {
		sep := ", "
		if i == len(r)-1 {
			sep = " or "
		}
		out += sep + sh.Expect()
	}
	return out
}

func (r Registry) dirShapes() []DirShape         { return only[DirShape](r) }
func (r Registry) fileShapes() []FileShape       { return only[FileShape](r) }
func (r Registry) dataDirShapes() []DataDirShape { return only[DataDirShape](r) }
func (r Registry) homeShapes() []HomeShape       { return only[HomeShape](r) }

// only returns the shapes of r that implement T, in order.
func only[T Shape](r Registry) []T {
	var out []T
	for _, sh := range r {
		if t, ok := sh.(T); ok {
			out = append(out, t)
		}
	}
	return out
}
