package shapes

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sessfix/sessfix/pkg/store"
)

// maxFixtureDepth bounds how deep a fixture tree is searched.
const maxFixtureDepth = 8

// openFixtureTree finds the stores inside a directory that is not a store
// itself: a repository folder of fixtures, holding `opencode export` files,
// sessions/ and storage/ trees, data dirs and databases, at any depth. A
// directory recognised as a store is opened whole and not searched further.
// Hidden directories, node_modules and symlinked directories are skipped.
// Unreadable entries are notes, never silent skips; .json files that are
// not exports are ignored (fixture repos hold other JSON too).
func (r Registry) openFixtureTree(root string) ([]store.Store, []string, error) {
	var (
		stores []store.Store
		notes  []string
	)
	var walk func(dir string, depth int) error
	walk = func(dir string, depth int) error {
		ents, err := os.ReadDir(dir)
		if err != nil {
			notes = append(notes, fmt.Sprintf("cannot read %s: %v; not scanned", dir, err))
			return nil
		}
		sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
		for _, e := range ents {
			name := e.Name()
			p := filepath.Join(dir, name)
			if strings.HasPrefix(name, ".") || name == "node_modules" {
				continue
			}
			switch {
			case e.IsDir():
				if r.recognised(p) {
					st, n, err := r.openPath(p)
					if err != nil {
						closeAll(stores)
						return err
					}
					stores, notes = append(stores, st...), append(notes, n...)
					continue
				}
				if depth < maxFixtureDepth {
					if err := walk(p, depth+1); err != nil {
						return err
					}
				}
			case e.Type().IsRegular():
				if !r.candidate(p) {
					continue
				}
				fi, err := e.Info()
				if err != nil {
					notes = append(notes, fmt.Sprintf("cannot read %s: %v; not scanned", p, err))
					continue
				}
				st, err := r.openFile(p, fi)
				if err != nil {
					notes = append(notes, err.Error()+"; not scanned")
					continue
				}
				stores = append(stores, st)
			}
		}
		return nil
	}
	if err := walk(root, 0); err != nil {
		return nil, nil, err
	}
	return stores, notes, nil
}

// candidate reports whether a file in a fixture tree may be a store: a
// shape says it is worth opening.
func (r Registry) candidate(p string) bool {
	for _, sh := range r.fileShapes() {
		if sh.Candidate(p) {
			return true
		}
	}
	return false
}
