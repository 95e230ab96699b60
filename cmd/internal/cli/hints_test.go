package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
)

// TestLibraryHints: every typed error of the packages that asks for advice
// gets its hint, wherever it sits in the error (wrapped, or joined with
// others), once, before the hints the command attached.
func TestLibraryHints(t *testing.T) {
	full := &store.WriteError{Err: fmt.Errorf("write x: %w", syscall.ENOSPC), Unchanged: true}
	for _, c := range []struct {
		name string
		err  error
		want []string
	}{
		{"changed", fmt.Errorf("session s: %w", store.Changed("/s/p.json", store.KindPart, "prt_1", "was modified")),
			[]string{"nothing was written; OpenCode (or someone) changed it, run sessfix again to plan from the current state"}},
		{"changed while restoring", &store.ChangedError{Where: "/s/p.json", How: "was removed", Restoring: true},
			[]string{"nothing was restored; OpenCode (or someone) is writing the session, run the undo again when it is quiet"}},
		{"held", &store.HeldError{Store: "/s", LockFile: "/s/.sessfix.lock"},
			[]string{"wait for it to finish; if no sessfix is running, remove /s/.sessfix.lock"}},
		{"busy", &store.BusyError{Path: "/d/opencode.db", Doing: "write", Err: errors.New("database is locked")},
			[]string{"close OpenCode or retry; nothing was changed"}},
		{"damaged database", &store.DamagedError{Path: "/d/my db/opencode.db", Check: "integrity_check", Problems: []string{"Tree 27 page 73: btreeInitPage() returns error code 11"}},
			[]string{"the database is damaged; sessfix wrote nothing and left it untouched",
				"keep a copy of it before anything else writes to it: cp -- '/d/my db/opencode.db' '/d/my db/opencode.db.damaged'",
				`see the damage: sessfix scan --deep --select SF501 '/d/my db/opencode.db'`}},
		{"disk full", full, []string{"the disk is full; free some space and run sessfix again (nothing was changed)"}},
		{"read-only, left changed", &store.WriteError{Err: fmt.Errorf("x: %w", syscall.EROFS)},
			[]string{"the store is on a read-only filesystem; remount it read-write or copy the store elsewhere (see the error for what was left changed)"}},
		{"permission", &store.WriteError{Err: fmt.Errorf("x: %w", fs.ErrPermission), Unchanged: true},
			[]string{"sessfix cannot write to the store; run it as the user who owns the files, or give that user write access (nothing was changed)"}},
		{"other write failure", &store.WriteError{Err: errors.New("boom"), Unchanged: true}, nil},
		{"state dir", &backup.StateDirError{Err: errors.New("$HOME is not defined")}, []string{"set SESSFIX_STATE_DIR or XDG_STATE_HOME"}},
		{"journal", &backup.JournalError{Err: errors.New("cannot write the backup manifest")},
			[]string{"sessfix backs up every edit before making it and writes nothing without a backup; free space in or fix permissions of the state directory, or set SESSFIX_STATE_DIR"}},
		{"store gone", &backup.StoreGoneError{RunID: "r1", Store: store.Info{Shape: store.ShapeSessions, Path: "/s"}, Before: "/b/r1/before"},
			[]string{"put the store back at /s and run the undo again", "the records the run changed, as they were before it, are in /b/r1/before"}},
		{"undo refused", &backup.RefusedError{RunID: "r1"},
			[]string{"run again with --force to put back the backed-up bytes anyway (the later changes are lost)"}},
		{"joined, said once, then the command's", WithHints(errors.Join(fmt.Errorf("a: %w", full), fmt.Errorf("b: %w", full)), "undo the run"),
			[]string{"the disk is full; free some space and run sessfix again (nothing was changed)", "undo the run"}},
		{"mid-run disk full", &backup.ApplyError{Session: "ses_c", Written: []string{"ses_a", "ses_b"}, RunID: "r1", Err: full},
			[]string{"sessions ses_a, ses_b were written before the failure and stay repaired; `sessfix undo r1` reverts them",
				"the disk is full; free some space and run sessfix again (session ses_c was left as it was)"}},
		{"mid-run refusal", &backup.ApplyError{Session: "ses_b", Written: []string{"ses_a"}, RunID: "r1", Err: store.Changed("/s/p.json", store.KindPart, "prt_1", "was modified")},
			[]string{"session ses_a was written before the failure and stays repaired; `sessfix undo r1` reverts it",
				"session ses_b was left as it was; OpenCode (or someone) changed it, run sessfix again to plan from the current state"}},
		{"first session failed", &backup.ApplyError{Session: "ses_a", Err: full},
			[]string{"the disk is full; free some space and run sessfix again (nothing was changed)"}},
		{"plain", errors.New("plain"), nil},
	} {
		if got := Hints(c.err); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Hints = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestPermissionHintKnowsTheOwner: a refused write is advised from who
// owns the file the error names, or the directory it was to be made in: a
// file of another user needs that user, one's own file its permission, and
// root is only refused by an immutable flag or a read-only mount.
func TestPermissionHintKnowsTheOwner(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ses.json")
	if err := os.WriteFile(file, []byte("{}"), 0o444); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	owner, ok := fileOwner(fi)
	if !ok {
		t.Skip("files have no owner uid on this system")
	}
	if owner == 0 {
		// Tests run as root: give the file to an ordinary user.
		if err := os.Chown(file, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		owner = 65534
	}
	defer func(g func() int) { geteuid = g }(geteuid)
	refused := func(path string) error {
		return &store.WriteError{Err: fmt.Errorf("write: %w", &fs.PathError{Op: "open", Path: path, Err: syscall.EACCES}), Unchanged: true}
	}
	rename := &store.WriteError{Err: &os.LinkError{Op: "rename", Old: file + ".tmp", New: file, Err: syscall.EPERM}}
	for _, c := range []struct {
		name string
		me   int
		err  error
		want string
	}{
		{"another user's file", owner + 1, refused(file), file + " belongs to " + userName(owner) + ", not to you; run sessfix as " + userName(owner) + " (nothing was changed)"},
		{"one's own file", owner, refused(file), file + " is yours but not writable; give it write permission (chmod u+w) or lift its immutable flag (lsattr, chattr -i) (nothing was changed)"},
		{"root", 0, rename, "not even root may write " + file + ": it is immutable (see lsattr; chattr -i lifts it) or on a read-only mount (see the error for what was left changed)"},
		{"a file to create, in one's own directory", owner, refused(filepath.Join(dir, "new.json")),
			"is yours but not writable; give it write permission"},
	} {
		if c.name == "a file to create, in one's own directory" {
			if os.Geteuid() == 0 {
				if err := os.Chown(dir, owner, owner); err != nil {
					t.Fatal(err)
				}
			} else if owner != os.Geteuid() {
				continue
			}
		}
		geteuid = func() int { return c.me }
		got := Hints(c.err)
		if len(got) != 1 || !strings.Contains(got[0], c.want) {
			t.Errorf("%s: Hints = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestImmutableFileHint: a write refused to root, or to the file's owner,
// on a file with the immutable flag (chattr +i; the flag is read through
// immutable, replaced here) says so and how to lift it, instead of
// sending the user to the files' owner or to chmod.
func TestImmutableFileHint(t *testing.T) {
	file := filepath.Join(t.TempDir(), "opencode.db")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	owner, _ := fileOwner(fi)
	defer func(g func() int, i func(string) bool) { geteuid, immutable = g, i }(geteuid, immutable)
	immutable = func(p string) bool { return p == file }
	refused := &store.WriteError{Err: fmt.Errorf("cannot write %s: attempt to write a readonly database (8) (%w)", file,
		&fs.PathError{Op: "write", Path: file, Err: syscall.EPERM}), Unchanged: true}
	for _, me := range []int{0, owner} {
		geteuid = func() int { return me }
		got := Hints(refused)
		want := file + " is immutable (lsattr shows its i flag), so no one may write it; lift the flag with `chattr -i " + file + "`"
		if len(got) != 1 || !strings.HasPrefix(got[0], want) || strings.Contains(got[0], "owns") {
			t.Errorf("uid %d: Hints = %q, want %q", me, got, want)
		}
	}
	immutable = func(string) bool { return false }
	geteuid = func() int { return owner }
	if got := Hints(refused); len(got) != 1 || strings.Contains(got[0], "lsattr shows its i flag") {
		t.Errorf("a file without the flag: %q", got)
	}
}

// TestFullDiskHintOnARead: a full disk met while reading (SQLite growing
// the -shm file of a WAL database as it reads the schema: the driver's
// error carries ENOSPC, not a *store.WriteError) gets the disk-full hint,
// once, first.
func TestFullDiskHintOnARead(t *testing.T) {
	read := WithHints(fmt.Errorf("cannot read the schema of /d/opencode.db: disk I/O error (4874) (%w)",
		&fs.PathError{Op: "read the schema of", Path: "/d/opencode.db", Err: syscall.ENOSPC}), "check that you can read the store's files")
	got := Hints(read)
	if len(got) != 2 || got[0] != "the disk is full; free some space and run sessfix again" {
		t.Errorf("Hints = %q", got)
	}
	write := &store.WriteError{Err: fmt.Errorf("write: %w", syscall.ENOSPC), Unchanged: true}
	if got := Hints(write); len(got) != 1 || !strings.HasPrefix(got[0], "the disk is full") {
		t.Errorf("a write's full disk: Hints = %q", got)
	}
}
