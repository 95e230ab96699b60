package store

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// maxFixtureDepth bounds how deep a fixture tree is searched.
const maxFixtureDepth = 8

// maxExportProbe is how much of a damaged .json file is looked at to decide
// whether it was meant to be an export file.
const maxExportProbe = 4096

// openFixtureTree finds the stores inside a directory that is not a store
// itself: a repository folder of fixtures, holding `opencode export` files,
// sessions/ and storage/ trees, data dirs and databases, at any depth. A
// directory recognised as a store is opened whole and not searched further.
// Hidden directories, node_modules and symlinked directories are skipped.
// Unreadable entries are notes, never silent skips; .json files that are
// not exports are ignored (fixture repos hold other JSON too).
func openFixtureTree(root string) ([]Store, []string, error) {
	var (
		stores []Store
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
				if recognisedDir(p) {
					st, n, err := openPath(p)
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
				if !fixtureFileCandidate(p) {
					continue
				}
				fi, err := e.Info()
				if err != nil {
					notes = append(notes, fmt.Sprintf("cannot read %s: %v; not scanned", p, err))
					continue
				}
				st, err := openFile(p, fi)
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

// recognisedDir reports whether openPath recognises d as a store without
// searching below it.
func recognisedDir(d string) bool {
	return isProjectStorage(d) || isJSONStorage(d) || isProjectStorage(filepath.Join(d, "storage")) ||
		isDataDir(d) || isSessionsDir(d) || isDir(filepath.Join(d, "sessions")) || len(projectTrees(d)) > 0
}

// fixtureFileCandidate reports whether a file in a fixture tree may be a
// store: an SQLite database, an export file, or a damaged .json file that
// starts like one (`{` then "info" or "messages" near the top), which is
// opened so the damage is named. Other JSON a fixture repository holds is
// not a candidate. An unreadable file is, so that opening it names the
// error.
func fixtureFileCandidate(p string) bool {
	if isSQLiteFile(p) {
		return true
	}
	if !strings.EqualFold(filepath.Ext(p), ".json") {
		return false
	}
	raw, err := os.ReadFile(p)
	if err != nil {
		return true
	}
	if CheckBody(raw) == nil {
		return isExport(raw)
	}
	head := bytes.TrimSpace(raw[:min(len(raw), maxExportProbe)])
	return len(head) > 0 && head[0] == '{' && (bytes.Contains(head, []byte(`"info"`)) || bytes.Contains(head, []byte(`"messages"`)))
}

func closeAll(stores []Store) {
	for _, s := range stores {
		s.Close()
	}
}
