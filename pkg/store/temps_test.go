package store

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// leaveTemps writes files into a store at the paths given (relative to
// root) and returns the absolute paths.
func leaveTemps(t *testing.T, root string, rel ...string) []string {
	t.Helper()
	var out []string
	for _, r := range rel {
		p := filepath.Join(root, r)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(`{"half":`), 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// A killed sessfix leaves its lock and, when it was killed between creating
// a temporary file and renaming it, that file: the next sessfix to take the
// store's lock removes every one of sessfix's temporary files in it, and
// nothing else.
func TestAcquireLockRemovesTheTempsOfADeadHolder(t *testing.T) {
	host, _ := os.Hostname()
	dead := LockHolder{PID: 1 << 30, Host: host, Started: time.Now()}

	t.Run("directory store", func(t *testing.T) {
		root := t.TempDir()
		info := Info{Shape: ShapeStorage, Path: root}
		temps := leaveTemps(t, root, "part/msg_1/.sessfix-prt_1.json-123.tmp", "message/ses_1/.sessfix-msg_1.json-9.tmp", ".sessfix-77.tmp")
		keep := leaveTemps(t, root, "part/msg_1/prt_1.json", "part/msg_1/.other.tmp", "part/msg_1/sessfix-1.tmp")
		writeLockFile(t, info, dead)
		l, err := AcquireLock(info)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release()
		slices.Sort(temps)
		if !slices.Equal(l.Swept, temps) {
			t.Errorf("Swept = %v, want %v", l.Swept, temps)
		}
		for _, p := range temps {
			if exists(p) {
				t.Errorf("%s was left", p)
			}
		}
		for _, p := range keep {
			if !exists(p) {
				t.Errorf("%s, not sessfix's, was removed", p)
			}
		}
	})

	t.Run("file store", func(t *testing.T) {
		dir := t.TempDir()
		info := Info{Shape: ShapeExport, Path: filepath.Join(dir, "a.json")}
		mine := leaveTemps(t, dir, ".sessfix-a.json-123.tmp")
		other := leaveTemps(t, dir, ".sessfix-b.json-5.tmp", ".sessfix-a.json-1-6.tmp")
		writeLockFile(t, info, dead)
		l, err := AcquireLock(info)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release()
		if !slices.Equal(l.Swept, mine) || exists(mine[0]) {
			t.Errorf("Swept = %v, want %v removed", l.Swept, mine)
		}
		for _, p := range other {
			if !exists(p) {
				t.Errorf("%s, another file's, was removed", p)
			}
		}
	})

	t.Run("live holder", func(t *testing.T) {
		root := t.TempDir()
		info := Info{Shape: ShapeStorage, Path: root}
		temps := leaveTemps(t, root, "part/msg_1/.sessfix-prt_1.json-123.tmp")
		held, err := AcquireLock(info)
		if err != nil {
			t.Fatal(err)
		}
		defer held.Release()
		if _, err := AcquireLock(info); err == nil {
			t.Fatal("a held lock was taken")
		}
		if !exists(temps[0]) {
			t.Error("the temporary file of a live sessfix was removed")
		}
	})
}

func TestTempNote(t *testing.T) {
	root := t.TempDir()
	store := filepath.Join(root, "my storage")
	info := Info{Shape: ShapeStorage, Path: store}
	temps := leaveTemps(t, store, "part/msg_1/.sessfix-prt_1.json-123.tmp", "part/msg_2/.sessfix-prt_2.json-1.tmp",
		"part/msg_3/.sessfix-prt_3.json-2.tmp", "part/msg_4/.sessfix-prt_4.json-3.tmp")
	keep := leaveTemps(t, store, "part/msg_1/prt_1.json")
	if got := TempNote(info, nil); got != "" {
		t.Errorf("note without temporary files: %q", got)
	}

	note := TempNote(info, temps)
	for _, want := range []string{"4 temporary files left by a sessfix that was killed", "part/msg_1/.sessfix-prt_1.json-123.tmp", "and 1 more", "remove them with: find '" + store + "' -name"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
	if strings.Contains(note, "next `sessfix fix`") {
		t.Errorf("note %q promises a removal no sessfix will do: there is no lock to replace", note)
	}

	host, _ := os.Hostname()
	writeLockFile(t, info, LockHolder{PID: 1 << 30, Host: host, Started: time.Now()})
	if n := TempNote(info, temps); !strings.Contains(n, "the next `sessfix fix` or `sessfix undo` on this store removes them") {
		t.Errorf("with a dead sessfix's lock, note = %q", n)
	}
	writeLockFile(t, info, LockHolder{PID: os.Getpid(), Host: host, Started: time.Now()})
	if n := TempNote(info, temps); n != "" {
		t.Errorf("the files of a live sessfix were reported: %q", n)
	}
	os.Remove(LockPath(info))

	// The command the note gives removes exactly sessfix's files.
	cmd := note[strings.Index(note, "with: ")+len("with: "):]
	if out, err := exec.Command("sh", "-c", cmd).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	for _, p := range temps {
		if exists(p) {
			t.Errorf("%s left by the note's command", p)
		}
	}
	if !exists(keep[0]) {
		t.Error("the note's command removed a record")
	}

	// A file store's command names only its own files.
	dir := filepath.Join(root, "it's here")
	exp := Info{Shape: ShapeExport, Path: filepath.Join(dir, "s.json")}
	mine := leaveTemps(t, dir, ".sessfix-s.json-1.tmp")
	other := leaveTemps(t, dir, ".sessfix-t.json-1.tmp")
	n := TempNote(exp, mine)
	cmd = n[strings.Index(n, "with: ")+len("with: "):]
	if out, err := exec.Command("sh", "-c", cmd).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	if exists(mine[0]) || !exists(other[0]) {
		t.Errorf("%q removed the wrong files", cmd)
	}
}
