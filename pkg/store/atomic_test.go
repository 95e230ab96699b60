package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// faultOps wraps the real filesystem and fails chosen calls. Counters are
// 1-based: failWriteAt = 2 fails the second temp-file write.
type faultOps struct {
	osOps
	writeErr     error
	failWriteAt  int
	syncErr      error
	failSyncAt   int
	createErr    error
	renameErr    error // a "crash" between writing the temp file and the rename
	failRenameAt int
	removeErr    error
	failRemoveAt int

	writes, syncs, renames, removes int
}

type faultFile struct {
	*os.File
	ops *faultOps
}

func (f *faultFile) Write(p []byte) (int, error) {
	f.ops.writes++
	if f.ops.writeErr != nil && (f.ops.failWriteAt == 0 || f.ops.writes == f.ops.failWriteAt) {
		// Write part of the data, as a full disk does.
		n, _ := f.File.Write(p[:len(p)/2])
		return n, &fs.PathError{Op: "write", Path: f.Name(), Err: f.ops.writeErr}
	}
	return f.File.Write(p)
}

func (f *faultFile) Sync() error {
	f.ops.syncs++
	if f.ops.syncErr != nil && (f.ops.failSyncAt == 0 || f.ops.syncs == f.ops.failSyncAt) {
		return &fs.PathError{Op: "sync", Path: f.Name(), Err: f.ops.syncErr}
	}
	return f.File.Sync()
}

func (o *faultOps) CreateTemp(dir, pattern string) (tempFile, error) {
	if o.createErr != nil {
		return nil, &fs.PathError{Op: "open", Path: filepath.Join(dir, pattern), Err: o.createErr}
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: f, ops: o}, nil
}

func (o *faultOps) Rename(from, to string) error {
	o.renames++
	if o.renameErr != nil && (o.failRenameAt == 0 || o.renames == o.failRenameAt) {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: o.renameErr}
	}
	return os.Rename(from, to)
}

func (o *faultOps) Remove(name string) error {
	o.removes++
	if o.removeErr != nil && (o.failRemoveAt == 0 || o.removes == o.failRemoveAt) {
		return &fs.PathError{Op: "remove", Path: name, Err: o.removeErr}
	}
	return os.Remove(name)
}

// treeState is every file under a directory: relative path → sha256 and
// mode. Directories are listed too, so removed and added ones show.
func treeState(t *testing.T, root string) map[string]string {
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

func assertSameTree(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	if d := diffState(before, after); len(d) > 0 {
		t.Fatalf("%s: the store changed:\n  %s", what, strings.Join(d, "\n  "))
	}
}

// tempLeft returns temp files left anywhere under root.
func tempLeft(t *testing.T, root string) []string {
	t.Helper()
	var left []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && isTempName(d.Name()) {
			left = append(left, p)
		}
		return nil
	})
	return left
}

func writeTestFile(t *testing.T, path, data string, mode fs.FileMode) {
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

func readTestFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteAtomicReplacesAndKeepsMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.json")
	writeTestFile(t, p, `{"old":true}`, 0o640)
	if err := WriteFileAtomic(p, []byte(`{"new":true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := readTestFile(t, p); got != `{"new":true}` {
		t.Fatalf("content = %q", got)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode = %v, want the original 0640", fi.Mode().Perm())
	}
	n := filepath.Join(dir, "new.json")
	if err := WriteFileAtomic(n, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(n); fi.Mode().Perm() != 0o600 {
		t.Fatalf("new file mode = %v, want 0600", fi.Mode().Perm())
	}
	if left := tempLeft(t, dir); len(left) > 0 {
		t.Fatalf("temp files left: %v", left)
	}
}

func TestWriteAtomicKeepsOwner(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.json")
	writeTestFile(t, p, `{}`, 0o644)
	uid, gid := os.Getuid(), os.Getgid()
	if os.Geteuid() == 0 {
		// As root sessfix must hand the file back to its owner, not to root.
		uid, gid = 4321, 4322
		if err := os.Chown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteFileAtomic(p, []byte(`{"x":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Lstat(p)
	gotUID, gotGID, ok := fileOwner(fi)
	if ok && (gotUID != uid || gotGID != gid) {
		t.Fatalf("owner = %d:%d, want %d:%d", gotUID, gotGID, uid, gid)
	}
}

func TestWriteAtomicRefusesSymlinkAndDirectory(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "victim")
	writeTestFile(t, outside, "precious", 0o644)
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	err := WriteFileAtomic(link, []byte("x"), 0o644)
	if err == nil || !strings.Contains(err.Error(), "symlink") || !strings.Contains(err.Error(), link) {
		t.Fatalf("err = %v, want a refusal naming the symlink", err)
	}
	if got := readTestFile(t, outside); got != "precious" {
		t.Fatalf("symlink target was written: %q", got)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced")
	}
	sub := filepath.Join(dir, "sub.json")
	os.Mkdir(sub, 0o755)
	if err := WriteFileAtomic(sub, []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("err = %v, want a refusal of a directory", err)
	}
}

func TestWriteAtomicFaults(t *testing.T) {
	cases := []struct {
		name string
		ops  *faultOps
		want string
	}{
		{"disk full on write", &faultOps{writeErr: syscall.ENOSPC}, "no space left"},
		{"fsync fails", &faultOps{syncErr: syscall.EIO}, "fsync"},
		{"crash before rename", &faultOps{renameErr: errors.New("killed")}, "rename into place"},
		{"read-only directory", &faultOps{createErr: syscall.EROFS}, "read-only"},
		{"permission denied", &faultOps{createErr: syscall.EACCES}, "permission denied"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "a.json")
			writeTestFile(t, p, `{"original":true}`, 0o644)
			before := treeState(t, dir)
			err := writeAtomic(c.ops, p, []byte(`{"replacement":true}`), 0o644, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("err = %v, want it to name %s and say %q", err, p, c.want)
			}
			assertSameTree(t, c.name, before, treeState(t, dir))
			if left := tempLeft(t, dir); len(left) > 0 {
				t.Fatalf("temp files left: %v", left)
			}
		})
	}
}

func TestCleanTemps(t *testing.T) {
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, ".sessfix-123.tmp"), "half", 0o600)
	writeTestFile(t, filepath.Join(dir, "prt_keep.json"), "{}", 0o644)
	writeTestFile(t, filepath.Join(dir, ".other.tmp"), "not ours", 0o600)
	cleanTemps(osOps{}, dir)
	if left := tempLeft(t, dir); len(left) > 0 {
		t.Fatalf("temp files left: %v", left)
	}
	for _, keep := range []string{"prt_keep.json", ".other.tmp"} {
		if _, err := os.Stat(filepath.Join(dir, keep)); err != nil {
			t.Errorf("%s was removed: %v", keep, err)
		}
	}
}
