package jsonfs

import (
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sessfix/sessfix/internal/atomicfile"
	"github.com/sessfix/sessfix/internal/recordfile"
	"github.com/sessfix/sessfix/pkg/store"
)

// fsRoot reads the files of one JSON store while confining every read to the
// store's directory: a symlink is followed only when it resolves inside the
// root. Failures become *ParseError values naming the file, so callers can
// turn them into Broken records.
type fsRoot struct {
	// root is absolute with symlinks resolved.
	root string
	// open, when set, opens every file for reading by path; tests set it
	// to inject failures that cannot be produced as root (permission
	// denied). When nil, files are opened with recordfile.Open, and record
	// files relative to their held directory (see readDirHeld).
	open func(name string) (*os.File, error)

	mu sync.Mutex
	// temps are the sessfix temporary files the listings saw.
	temps map[string]bool
}

func newFSRoot(dir string) (*fsRoot, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", dir, err)
	}
	return &fsRoot{root: real}, nil
}

// inside reports whether the resolved path p lies within the root.
func (r *fsRoot) inside(p string) bool {
	if p == r.root {
		return true
	}
	rel, err := filepath.Rel(r.root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// entry is one directory entry after symlink resolution.
type entry struct {
	Name string
	Path string
	// IsDir is true for directories (or symlinks to directories inside the root).
	IsDir bool
	// Err is set when the entry cannot be used: a symlink leaving the
	// store, a dangling symlink, a special file.
	Err *store.ParseError
	// dir is the listed directory, still open, when the entry came from
	// readDirHeld: the record is then opened relative to it.
	dir *os.File
}

// readDir lists dir sorted by name (byte order). A missing directory is
// empty; any other failure is returned as a *ParseError naming it.
func (r *fsRoot) readDir(dir string) ([]entry, *store.ParseError) {
	out, _, perr := r.listDir(dir, false)
	return out, perr
}

// readDirHeld is readDir keeping the directory open, where the platform
// can open files relative to it (recordfile.ReadAt): reading its records then
// costs no path walk per file. release closes the directory once the
// entries are read; it is never nil.
func (r *fsRoot) readDirHeld(dir string) (entries []entry, release func(), perr *store.ParseError) {
	return r.listDir(dir, recordfile.OpenAt && r.open == nil)
}

func (r *fsRoot) listDir(dir string, hold bool) ([]entry, func(), *store.ParseError) {
	f, des, err := readDirSorted(dir, hold)
	release := func() {}
	if f != nil {
		release = func() { f.Close() }
	}
	if err != nil && len(des) == 0 {
		release()
		if errors.Is(err, fs.ErrNotExist) {
			return nil, func() {}, nil
		}
		return nil, func() {}, recordfile.Error(dir, err)
	}
	out := make([]entry, 0, len(des))
	j := newJoiner(dir)
	for _, de := range des {
		e := entry{Name: de.Name(), Path: j.join(de.Name()), dir: f}
		t := de.Type()
		switch {
		case t&fs.ModeSymlink != 0:
			e.IsDir, e.Err = r.resolve(e.Path)
		case t.IsDir():
			e.IsDir = true
		case !t.IsRegular():
			e.Err = &store.ParseError{Entry: true, Reason: "not a regular file", Detail: e.Path}
		case atomicfile.IsTemp(e.Name):
			r.sawTemp(e.Path)
		}
		out = append(out, e)
	}
	return out, release, nil
}

// sawTemp records a sessfix temporary file a listing came across.
func (r *fsRoot) sawTemp(p string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.temps == nil {
		r.temps = map[string]bool{}
	}
	r.temps[p] = true
}

// withNotes returns info with a note about the sessfix temporary files the
// listings so far came across (store.TempNote), if any.
func (r *fsRoot) withNotes(info store.Info) store.Info {
	r.mu.Lock()
	temps := make([]string, 0, len(r.temps))
	for p := range r.temps {
		temps = append(temps, p)
	}
	r.mu.Unlock()
	slices.Sort(temps)
	if note := store.TempNote(info, temps); note != "" {
		info.Notes = append(slices.Clip(info.Notes), note)
	}
	return info
}

// joiner is filepath.Join(dir, name) for the names read from dir, cleaning
// dir once, not for every name: when dir is already clean (every
// directory a store lists is made by filepath.Join), joining is a
// concatenation.
type joiner struct {
	dir, prefix string
	clean       bool
}

func newJoiner(dir string) joiner {
	j := joiner{dir: dir}
	if dir != "" && dir != "." && filepath.Clean(dir) == dir {
		j.clean, j.prefix = true, dir
		if !os.IsPathSeparator(dir[len(dir)-1]) {
			j.prefix += string(filepath.Separator)
		}
	}
	return j
}

func (j joiner) join(name string) string {
	if !j.clean || name == "." || name == ".." {
		return filepath.Join(j.dir, name)
	}
	return j.prefix + name
}

// readDirSorted is os.ReadDir (entries sorted by name) opening the
// directory with recordfile.Open. With hold, the directory is returned open
// (nil after an error); the caller closes it.
func readDirSorted(dir string, hold bool) (*os.File, []fs.DirEntry, error) {
	f, err := recordfile.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	des, err := f.ReadDir(-1)
	if !hold || err != nil {
		f.Close()
		f = nil
	}
	slices.SortFunc(des, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return f, des, err
}

// resolve follows the symlink at p and reports whether its target is a
// directory; a target outside the root or missing is an error.
func (r *fsRoot) resolve(p string) (bool, *store.ParseError) {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		link, _ := os.Readlink(p)
		return false, &store.ParseError{Entry: true, Reason: "dangling symlink", Detail: p + " points to " + link}
	}
	if !r.inside(target) {
		return false, &store.ParseError{Entry: true, Reason: "symlink out of the store", Detail: p + " points to " + target}
	}
	fi, err := os.Stat(target)
	if err != nil {
		return false, recordfile.Error(p, err)
	}
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		return false, &store.ParseError{Entry: true, Reason: "not a regular file", Detail: p}
	}
	return fi.IsDir(), nil
}

// entryFor describes one path like readDir would; ok is false when
// nothing is there.
func (r *fsRoot) entryFor(p string) (e entry, ok bool) {
	fi, err := os.Lstat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return entry{}, false
		}
		return entry{Name: filepath.Base(p), Path: p, Err: recordfile.Error(p, err)}, true
	}
	e = entry{Name: filepath.Base(p), Path: p}
	switch t := fi.Mode().Type(); {
	case t&fs.ModeSymlink != 0:
		e.IsDir, e.Err = r.resolve(p)
	case t.IsDir():
		e.IsDir = true
	case !t.IsRegular():
		e.Err = &store.ParseError{Entry: true, Reason: "not a regular file", Detail: p}
	}
	if e.IsDir && e.Err == nil && isRecordName(e.Name) {
		e.Err = &store.ParseError{Entry: true, Reason: "is a directory", Detail: p}
	}
	return e, true
}

// jsonFiles yields the record files in entries: names ending in ".json"
// that are not hidden (temp files are hidden or have another suffix). The
// entries keep their Err; a directory named *.json gets one.
func jsonFiles(entries []entry) iter.Seq[entry] {
	return func(yield func(entry) bool) {
		for _, e := range entries {
			if !isRecordName(e.Name) {
				continue
			}
			if e.IsDir && e.Err == nil {
				e.Err = &store.ParseError{Entry: true, Reason: "is a directory", Detail: e.Path}
			}
			if !yield(e) {
				return
			}
		}
	}
}

// subdirs yields the directory entries (and broken symlinks, which may
// have been meant as directories), skipping hidden names and plain files.
func subdirs(entries []entry) iter.Seq[entry] {
	return func(yield func(entry) bool) {
		for _, e := range entries {
			if strings.HasPrefix(e.Name, ".") {
				continue
			}
			if e.IsDir || (e.Err != nil && e.Err.Reason != "not a regular file") {
				if !yield(e) {
					return
				}
			}
		}
	}
}

// isRecordName reports whether a file name is a record file.
func isRecordName(name string) bool {
	return strings.HasSuffix(name, ".json") && len(name) > len(".json") && !strings.HasPrefix(name, ".")
}

// recordID is the id a record file's name gives it.
func recordID(name string) string { return strings.TrimSuffix(name, ".json") }

// readFile reads one record file with a bounded read (see recordfile).
func (r *fsRoot) readFile(p string) ([]byte, time.Time, *store.ParseError) {
	return recordfile.Read(p, r.open)
}

// readEntry reads a listed record file: relative to its held directory
// when there is one, else by path.
func (r *fsRoot) readEntry(e entry) ([]byte, time.Time, *store.ParseError) {
	if e.dir != nil {
		return recordfile.ReadAt(e.dir, e.Name, e.Path)
	}
	return r.readFile(e.Path)
}

// readRecord reads the record file of a directory entry. The result has
// Err set (a *ParseError) when the file cannot be read or its body is not a
// JSON object; Kind and ID come from the caller (the path).
func (r *fsRoot) readRecord(e entry, kind store.Kind, id string) *store.Record {
	rec := &store.Record{Kind: kind, ID: id, Loc: store.Location{Path: e.Path}}
	if e.Err != nil {
		rec.Err = e.Err
		return rec
	}
	raw, mod, perr := r.readEntry(e)
	rec.Modified = mod
	if perr != nil {
		rec.Err = perr
		return rec
	}
	rec.Raw = raw
	rec.Loc.Line = 1
	rec.Check()
	return rec
}
