package jsonfs

import (
	"os"
	"path/filepath"

	"github.com/sessfix/sessfix/pkg/store"
)

// The three layouts as entries of the shapes registry (pkg/store/shapes):
// how each is recognised, found in OpenCode's data dir or the home
// directory, opened, and written.

// writes gives the three layouts their one writer.
type writes struct{}

func (writes) OpenWriter(info store.Info, opts store.WriteOptions) (store.Writer, error) {
	return newJSONWriter(info, opts.FileOps())
}

// Storage is the JSON storage/ tree of OpenCode 1.0–1.1.
type Storage struct{ writes }

func (Storage) Name() store.Shape { return store.ShapeStorage }
func (Storage) Expect() string    { return "a storage/ dir" }

func (Storage) Open(path string) (store.Store, error) { return opened(openStorage(path)) }

// At returns dir when it is a storage/ tree.
func (Storage) At(dir string) []string {
	if isJSONStorage(dir) {
		return []string{dir}
	}
	return nil
}

func (Storage) Within(string) []string { return nil }

// InDataDir returns the data dir's storage/ tree.
func (Storage) InDataDir(dir, _ string) (found, looked []string) {
	storage := filepath.Join(dir, "storage")
	if isJSONStorage(storage) {
		found = []string{storage}
	}
	return found, []string{storage}
}

func (Storage) Superseded(dir string, _ []string) string {
	return filepath.Join(dir, "storage") + " is a pre-migration copy of the database (OpenCode 1.2+ no longer reads it); not scanned: name it explicitly to scan it"
}

// Project is the per-project tree of OpenCode 0.5 and earlier.
type Project struct{ writes }

func (Project) Name() store.Shape { return store.ShapeProject }
func (Project) Expect() string    { return "a project tree" }

func (Project) Open(path string) (store.Store, error) { return opened(openProject(path)) }

// At returns dir when it is a project tree's storage/ dir, or dir's
// storage/ when that is one.
func (Project) At(dir string) []string {
	for _, d := range []string{dir, filepath.Join(dir, "storage")} {
		if isProjectStorage(d) {
			return []string{d}
		}
	}
	return nil
}

// Within returns the project trees below dir (a <data>/project dir).
func (Project) Within(dir string) []string { return projectTrees(dir) }

// InDataDir returns the project trees of the data dir.
func (Project) InDataDir(dir, _ string) (found, looked []string) {
	projects := filepath.Join(dir, "project")
	return projectTrees(projects), []string{filepath.Join(projects, "*", "storage")}
}

func (Project) Superseded(dir string, _ []string) string {
	return filepath.Join(dir, "project") + " holds pre-migration project trees (OpenCode 1.0+ no longer reads them); not scanned: name one explicitly to scan it"
}

// Sessions is the sessions/ layout (~/.opencode/sessions, and fixtures).
type Sessions struct{ writes }

func (Sessions) Name() store.Shape { return store.ShapeSessions }
func (Sessions) Expect() string    { return "a sessions dir (or its parent)" }

func (Sessions) Open(path string) (store.Store, error) { return opened(openSessions(path)) }

func (Sessions) At(string) []string { return nil }

// Within returns the sessions dir that dir is or holds: a dir holding
// session directories, a parent whose sessions/ does, or any dir named
// sessions (or with a sessions/ child), even empty.
func (Sessions) Within(dir string) []string {
	sub := filepath.Join(dir, "sessions")
	switch {
	case holdsSessions(dir):
		return []string{dir}
	case holdsSessions(sub):
		// A root whose sessions/ holds sessions, even when the root is
		// itself named "sessions".
		return []string{sub}
	case filepath.Base(dir) == "sessions":
		return []string{dir}
	case isDir(sub):
		return []string{sub}
	}
	return nil
}

// InHome returns ~/.opencode/sessions.
func (Sessions) InHome(home string) (found, looked []string) {
	sessions := filepath.Join(home, ".opencode", "sessions")
	if isDir(sessions) {
		found = []string{sessions}
	}
	return found, []string{sessions}
}

// opened returns a reader as a store.Store, and no typed nil on error.
func opened[S store.Store](st S, err error) (store.Store, error) {
	if err != nil {
		return nil, err
	}
	return st, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// isProjectStorage reports whether d is the storage/ dir of a ≤0.5 project
// tree: session/{info,message,part}.
func isProjectStorage(d string) bool {
	s := filepath.Join(d, "session")
	return isDir(filepath.Join(s, "info")) || isDir(filepath.Join(s, "message")) || isDir(filepath.Join(s, "part"))
}

// isJSONStorage reports whether d is a 1.0–1.1 storage/ dir.
func isJSONStorage(d string) bool {
	if isProjectStorage(d) {
		return false
	}
	return isDir(filepath.Join(d, "session")) || isDir(filepath.Join(d, "message")) || isDir(filepath.Join(d, "part"))
}

// holdsSessions reports whether d holds a session directory with
// messages/, parts/ or session.json.
func holdsSessions(d string) bool {
	entries, err := os.ReadDir(d)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		c := filepath.Join(d, e.Name())
		if isDir(filepath.Join(c, "messages")) || isDir(filepath.Join(c, "parts")) || isFile(filepath.Join(c, "session.json")) {
			return true
		}
	}
	return false
}

// projectTrees returns the storage dirs of the project trees under dir
// (<data>/project), sorted.
func projectTrees(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		s := filepath.Join(dir, e.Name(), "storage")
		if isProjectStorage(s) {
			out = append(out, s)
		}
	}
	return out
}
