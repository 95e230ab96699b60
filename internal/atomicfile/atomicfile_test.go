package atomicfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/sessfix/sessfix/internal/atomicfile"
	"github.com/sessfix/sessfix/internal/atomicfile/atomicfiletest"
)

func TestWriteAtomicReplacesAndKeepsMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.json")
	atomicfiletest.WriteFile(t, p, `{"old":true}`, 0o640)
	if err := atomicfile.WriteFile(p, []byte(`{"new":true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := atomicfiletest.ReadFile(t, p); got != `{"new":true}` {
		t.Fatalf("content = %q", got)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode = %v, want the original 0640", fi.Mode().Perm())
	}
	n := filepath.Join(dir, "new.json")
	if err := atomicfile.WriteFile(n, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(n); fi.Mode().Perm() != 0o600 {
		t.Fatalf("new file mode = %v, want 0600", fi.Mode().Perm())
	}
	if left := atomicfiletest.TempLeft(t, dir); len(left) > 0 {
		t.Fatalf("temp files left: %v", left)
	}
}

func TestWriteAtomicKeepsOwner(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.json")
	atomicfiletest.WriteFile(t, p, `{}`, 0o644)
	uid, gid := os.Getuid(), os.Getgid()
	if os.Geteuid() == 0 {
		// As root sessfix must hand the file back to its owner, not to root.
		uid, gid = 4321, 4322
		if err := os.Chown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	if err := atomicfile.WriteFile(p, []byte(`{"x":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Lstat(p)
	if got := atomicfile.OwnerOf(fi); got != nil && (got.UID != uid || got.GID != gid) {
		t.Fatalf("owner = %d:%d, want %d:%d", got.UID, got.GID, uid, gid)
	}
}

func TestWriteAtomicRefusesSymlinkAndDirectory(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "victim")
	atomicfiletest.WriteFile(t, outside, "precious", 0o644)
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	err := atomicfile.WriteFile(link, []byte("x"), 0o644)
	if err == nil || !strings.Contains(err.Error(), "symlink") || !strings.Contains(err.Error(), link) {
		t.Fatalf("err = %v, want a refusal naming the symlink", err)
	}
	if got := atomicfiletest.ReadFile(t, outside); got != "precious" {
		t.Fatalf("symlink target was written: %q", got)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced")
	}
	sub := filepath.Join(dir, "sub.json")
	os.Mkdir(sub, 0o755)
	if err := atomicfile.WriteFile(sub, []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("err = %v, want a refusal of a directory", err)
	}
}

func TestWriteAtomicFaults(t *testing.T) {
	cases := []struct {
		name string
		ops  *atomicfiletest.FaultOps
		want string
	}{
		{"disk full on write", &atomicfiletest.FaultOps{WriteErr: syscall.ENOSPC}, "no space left"},
		{"fsync fails", &atomicfiletest.FaultOps{SyncErr: syscall.EIO}, "fsync"},
		{"crash before rename", &atomicfiletest.FaultOps{RenameErr: errors.New("killed")}, "rename into place"},
		{"read-only directory", &atomicfiletest.FaultOps{CreateErr: syscall.EROFS}, "read-only"},
		{"permission denied", &atomicfiletest.FaultOps{CreateErr: syscall.EACCES}, "permission denied"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "a.json")
			atomicfiletest.WriteFile(t, p, `{"original":true}`, 0o644)
			before := atomicfiletest.TreeState(t, dir)
			err := atomicfile.Write(c.ops, p, []byte(`{"replacement":true}`), 0o644, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("err = %v, want it to name %s and say %q", err, p, c.want)
			}
			atomicfiletest.AssertSameTree(t, c.name, before, atomicfiletest.TreeState(t, dir))
			if left := atomicfiletest.TempLeft(t, dir); len(left) > 0 {
				t.Fatalf("temp files left: %v", left)
			}
		})
	}
}

func TestCleanTemps(t *testing.T) {
	dir := t.TempDir()
	atomicfiletest.WriteFile(t, filepath.Join(dir, ".sessfix-123.tmp"), "half", 0o600)
	atomicfiletest.WriteFile(t, filepath.Join(dir, "prt_keep.json"), "{}", 0o644)
	atomicfiletest.WriteFile(t, filepath.Join(dir, ".other.tmp"), "not ours", 0o600)
	atomicfile.CleanTemps(atomicfile.OS{}, dir)
	if left := atomicfiletest.TempLeft(t, dir); len(left) > 0 {
		t.Fatalf("temp files left: %v", left)
	}
	for _, keep := range []string{"prt_keep.json", ".other.tmp"} {
		if _, err := os.Stat(filepath.Join(dir, keep)); err != nil {
			t.Errorf("%s was removed: %v", keep, err)
		}
	}
}

// nameOps records the names of the temporary files it creates.
type nameOps struct {
	atomicfile.OS
	names []string
}

func (o *nameOps) CreateTemp(dir, pattern string) (atomicfile.TempFile, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err == nil {
		o.names = append(o.names, filepath.Base(f.Name()))
	}
	return f, err
}

func TestTempFilesAreNamedForTheirTarget(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("é", 120) + ".json" // 245 bytes: the name must be cut
	for _, target := range []string{"prt_1.json", "session export.json", long} {
		ops := &nameOps{}
		p := filepath.Join(dir, target)
		if err := atomicfile.Write(ops, p, []byte("{}"), 0o644, nil); err != nil {
			t.Fatal(err)
		}
		if len(ops.names) != 1 || !atomicfile.IsTempOf(ops.names[0], p) || !atomicfile.IsTemp(ops.names[0]) {
			t.Errorf("temporary file for %q named %v; want TempPrefix %q then digits and .tmp", target, ops.names, atomicfile.TempPrefix(p))
		}
		if !utf8.ValidString(ops.names[0]) || len(ops.names[0]) > 255 {
			t.Errorf("temporary file name %q is not a valid file name", ops.names[0])
		}
	}
}

func TestCleanTempsOfKeepsOtherFilesTemps(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.json")
	for _, name := range []string{".sessfix-a.json-123.tmp", ".sessfix-a.json-1-456.tmp", ".sessfix-b.json-9.tmp", ".sessfix-77.tmp", ".sessfix-a.json-x.tmp"} {
		atomicfiletest.WriteFile(t, filepath.Join(dir, name), "half", 0o600)
	}
	if got, want := atomicfile.TempsOf(a), []string{filepath.Join(dir, ".sessfix-a.json-123.tmp")}; !slices.Equal(got, want) {
		t.Errorf("TempsOf(a.json) = %v, want %v", got, want)
	}
	atomicfile.CleanTempsOf(atomicfile.OS{}, a)
	got := atomicfiletest.TempLeft(t, dir)
	want := []string{".sessfix-77.tmp", ".sessfix-a.json-1-456.tmp", ".sessfix-a.json-x.tmp", ".sessfix-b.json-9.tmp"}
	for i := range got {
		got[i] = filepath.Base(got[i])
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("left %v, want only a.json's own temporary file gone: %v", got, want)
	}
}
