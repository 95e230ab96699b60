package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// maxRecordSize bounds how much of one record file is read. OpenCode's
// largest parts (tool outputs, file attachments) stay far below it; a file
// above it is reported as a Broken record rather than read into memory.
const maxRecordSize = 256 << 20

// fsRoot reads the files of one JSON store while confining every read to the
// store's directory: a symlink is followed only when it resolves inside the
// root. Failures become *ParseError values naming the file, so callers can
// turn them into Broken records.
type fsRoot struct {
	// root is absolute with symlinks resolved.
	root string
	// open, when set, opens every file for reading by path; tests set it
	// to inject failures that cannot be produced as root (permission
	// denied). When nil, files are opened with openRead, and record files
	// relative to their held directory (see readDirHeld).
	open func(name string) (*os.File, error)
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
	Err *ParseError
	// dir is the listed directory, still open, when the entry came from
	// readDirHeld: the record is then opened relative to it.
	dir *os.File
}

// readDir lists dir sorted by name (byte order). A missing directory is
// empty; any other failure is returned as a *ParseError naming it.
func (r *fsRoot) readDir(dir string) ([]entry, *ParseError) {
	out, _, perr := r.listDir(dir, false)
	return out, perr
}

// readDirHeld is readDir keeping the directory open, where the platform
// can open files relative to it (see readAt): reading its records then
// costs no path walk per file. release closes the directory once the
// entries are read; it is never nil.
func (r *fsRoot) readDirHeld(dir string) (entries []entry, release func(), perr *ParseError) {
	return r.listDir(dir, openAtDir && r.open == nil)
}

func (r *fsRoot) listDir(dir string, hold bool) ([]entry, func(), *ParseError) {
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
		return nil, func() {}, fsError(dir, err)
	}
	out := make([]entry, 0, len(des))
	for _, de := range des {
		e := entry{Name: de.Name(), Path: joinClean(dir, de.Name()), dir: f}
		t := de.Type()
		switch {
		case t&fs.ModeSymlink != 0:
			e.IsDir, e.Err = r.resolve(e.Path)
		case t.IsDir():
			e.IsDir = true
		case !t.IsRegular():
			e.Err = &ParseError{Entry: true, Reason: "not a regular file", Detail: e.Path}
		}
		out = append(out, e)
	}
	return out, release, nil
}

// joinClean is filepath.Join(dir, name) for a name read from dir, without
// cleaning the result again when dir is already clean (every directory a
// store lists is made by filepath.Join).
func joinClean(dir, name string) string {
	if dir == "" || dir == "." || filepath.Clean(dir) != dir || name == "." || name == ".." {
		return filepath.Join(dir, name)
	}
	if os.IsPathSeparator(dir[len(dir)-1]) {
		return dir + name
	}
	return dir + string(filepath.Separator) + name
}

// readDirSorted is os.ReadDir (entries sorted by name) opening the
// directory with openRead. With hold, the directory is returned open
// (nil after an error); the caller closes it.
func readDirSorted(dir string, hold bool) (*os.File, []fs.DirEntry, error) {
	f, err := openRead(dir)
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
func (r *fsRoot) resolve(p string) (bool, *ParseError) {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		link, _ := os.Readlink(p)
		return false, &ParseError{Entry: true, Reason: "dangling symlink", Detail: p + " points to " + link}
	}
	if !r.inside(target) {
		return false, &ParseError{Entry: true, Reason: "symlink out of the store", Detail: p + " points to " + target}
	}
	fi, err := os.Stat(target)
	if err != nil {
		return false, fsError(p, err)
	}
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		return false, &ParseError{Entry: true, Reason: "not a regular file", Detail: p}
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
		return entry{Name: filepath.Base(p), Path: p, Err: fsError(p, err)}, true
	}
	e = entry{Name: filepath.Base(p), Path: p}
	switch t := fi.Mode().Type(); {
	case t&fs.ModeSymlink != 0:
		e.IsDir, e.Err = r.resolve(p)
	case t.IsDir():
		e.IsDir = true
	case !t.IsRegular():
		e.Err = &ParseError{Entry: true, Reason: "not a regular file", Detail: p}
	}
	if e.IsDir && e.Err == nil && isRecordName(e.Name) {
		e.Err = &ParseError{Entry: true, Reason: "is a directory", Detail: p}
	}
	return e, true
}

// jsonFiles returns the record files in entries: names ending in ".json"
// that are not hidden (temp files are hidden or have another suffix). The
// returned entries keep their Err; a directory named *.json gets one.
func jsonFiles(entries []entry) []entry {
	out := entries[:0:0]
	for _, e := range entries {
		if !isRecordName(e.Name) {
			continue
		}
		if e.IsDir && e.Err == nil {
			e.Err = &ParseError{Entry: true, Reason: "is a directory", Detail: e.Path}
		}
		out = append(out, e)
	}
	return out
}

// subdirs returns the directory entries (and broken symlinks, which may
// have been meant as directories), skipping hidden names and plain files.
func subdirs(entries []entry) []entry {
	out := entries[:0:0]
	for _, e := range entries {
		if strings.HasPrefix(e.Name, ".") {
			continue
		}
		if e.IsDir || (e.Err != nil && e.Err.Reason != "not a regular file") {
			out = append(out, e)
		}
	}
	return out
}

// isRecordName reports whether a file name is a record file.
func isRecordName(name string) bool {
	return strings.HasSuffix(name, ".json") && len(name) > len(".json") && !strings.HasPrefix(name, ".")
}

// recordID is the id a record file's name gives it.
func recordID(name string) string { return strings.TrimSuffix(name, ".json") }

// readFile reads one record file with a bounded read. It returns the bytes
// and the file's mtime, or a *ParseError naming the file.
func (r *fsRoot) readFile(p string) ([]byte, time.Time, *ParseError) {
	open := r.open
	if open == nil {
		open = openRead
	}
	f, err := open(p)
	if err != nil {
		return nil, time.Time{}, fsError(p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, fsError(p, err)
	}
	return readBody(p, fi.Size(), fi.IsDir(), fi.Mode().IsRegular(), fi.ModTime(), f.Read)
}

// readEntry reads a listed record file: relative to its held directory
// when there is one, else by path.
func (r *fsRoot) readEntry(e entry) ([]byte, time.Time, *ParseError) {
	if e.dir != nil {
		return readAt(e.dir, e.Name, e.Path)
	}
	return r.readFile(e.Path)
}

// readBody reads the open file p, whose fstat said size, dir, regular and
// mtime, with a bounded read: read is the file's Read.
func readBody(p string, size int64, dir, regular bool, mtime time.Time, read func([]byte) (int, error)) ([]byte, time.Time, *ParseError) {
	if dir {
		return nil, mtime, &ParseError{Entry: true, Reason: "is a directory", Detail: p}
	}
	if !regular {
		return nil, mtime, &ParseError{Entry: true, Reason: "not a regular file", Detail: p}
	}
	if size > maxRecordSize {
		return nil, mtime, &ParseError{Reason: "too large", Detail: fmt.Sprintf("%s has %d bytes (limit %d)", p, size, maxRecordSize)}
	}
	buf := make([]byte, 0, size+1)
	for {
		n, err := read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, mtime, fsError(p, err)
		}
		// A short read that ends where Stat said the file ends is the end
		// of a regular file: no second read to see io.EOF.
		if int64(len(buf)) == size && len(buf) < cap(buf) {
			break
		}
		if len(buf) > maxRecordSize {
			return nil, mtime, &ParseError{Reason: "too large", Detail: fmt.Sprintf("%s grew past %d bytes while reading", p, maxRecordSize)}
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
	return buf, mtime, nil
}

// fsError turns a filesystem error into a *ParseError naming the file.
func fsError(p string, err error) *ParseError {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return &ParseError{Entry: true, Reason: "permission denied", Detail: p}
	case errors.Is(err, fs.ErrNotExist):
		return &ParseError{Entry: true, Reason: "vanished", Detail: p + " no longer exists"}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &ParseError{Entry: true, Reason: "unreadable", Detail: p + ": " + err.Error()}
}

// readRecord reads the record file of a directory entry. The result has
// Err set (a *ParseError) when the file cannot be read or its body is not a
// JSON object; Kind and ID come from the caller (the path).
func (r *fsRoot) readRecord(e entry, kind Kind, id string) *Record {
	rec := &Record{Kind: kind, ID: id, Loc: Location{Path: e.Path}}
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
	rec.idx, rec.Err = checkBody(raw)
	return rec
}
