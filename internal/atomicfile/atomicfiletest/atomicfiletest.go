// Package atomicfiletest injects filesystem faults into atomicfile's
// writers and compares directory trees before and after, for the fault
// tests of every writer: the original is untouched and no temporary file
// is left.
package atomicfiletest

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/atomicfile"
)

// FaultOps wraps the real filesystem and fails chosen calls. Counters are
// 1-based: FailWriteAt = 2 fails the second temp-file write.
type FaultOps struct {
	atomicfile.OS
	WriteErr     error
	FailWriteAt  int
	SyncErr      error
	FailSyncAt   int
	CreateErr    error
	RenameErr    error // a "crash" between writing the temp file and the rename
	FailRenameAt int
	RemoveErr    error
	FailRemoveAt int

	writes, syncs, renames, removes int
}

type faultFile struct {
	*os.File
	ops *FaultOps
}

func (f *faultFile) Write(p []byte) (int, error) {
	f.ops.writes++
	if f.ops.WriteErr != nil && (f.ops.FailWriteAt == 0 || f.ops.writes == f.ops.FailWriteAt) {
		// Write part of the data, as a full disk does.
		n, _ := f.File.Write(p[:len(p)/2])
		return n, &fs.PathError{Op: "write", Path: f.Name(), Err: f.ops.WriteErr}
	}
	return f.File.Write(p)
}

func (f *faultFile) Sync() error {
	f.ops.syncs++
	if f.ops.SyncErr != nil && (f.ops.FailSyncAt == 0 || f.ops.syncs == f.ops.FailSyncAt) {
		return &fs.PathError{Op: "sync", Path: f.Name(), Err: f.ops.SyncErr}
	}
	return f.File.Sync()
}

func (o *FaultOps) CreateTemp(dir, pattern string) (atomicfile.TempFile, error) {
	if o.CreateErr != nil {
		return nil, &fs.PathError{Op: "open", Path: filepath.Join(dir, pattern), Err: o.CreateErr}
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: f, ops: o}, nil
}

func (o *FaultOps) Rename(from, to string) error {
	o.renames++
	if o.RenameErr != nil && (o.FailRenameAt == 0 || o.renames == o.FailRenameAt) {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: o.RenameErr}
	}
	return os.Rename(from, to)
}

func (o *FaultOps) Remove(name string) error {
	o.removes++
	if o.RemoveErr != nil && (o.FailRemoveAt == 0 || o.removes == o.FailRemoveAt) {
		return &fs.PathError{Op: "remove", Path: name, Err: o.RemoveErr}
	}
	return os.Remove(name)
}

// TreeState is every file under a directory: relative path → sha256 and
// mode. Directories are listed too, so removed and added ones show.
func TreeState(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			out[rel+"/"] = fi.Mode().String()
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "symlink " + target
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s := sha256.Sum256(b)
			out[rel] = hex.EncodeToString(s[:]) + " " + fi.Mode().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// diffState lists the differences between two tree states.
func diffState(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			out = append(out, "removed "+k)
		} else if v != w {
			out = append(out, "changed "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, "added "+k)
		}
	}
	sort.Strings(out)
	return out
}

// AssertSameTree fails the test when before and after differ, listing
// what was added, removed or changed.
func AssertSameTree(t testing.TB, what string, before, after map[string]string) {
	t.Helper()
	if d := diffState(before, after); len(d) > 0 {
		t.Fatalf("%s: the store changed:\n  %s", what, strings.Join(d, "\n  "))
	}
}

// TempLeft returns temp files left anywhere under root.
func TempLeft(t testing.TB, root string) []string {
	t.Helper()
	var left []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && atomicfile.IsTemp(d.Name()) {
			left = append(left, p)
		}
		return nil
	})
	return left
}

// WriteFile creates path (and its directory) with data and exactly mode.
func WriteFile(t testing.TB, path, data string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// ReadFile returns the content of path.
func ReadFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
