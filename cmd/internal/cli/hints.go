package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
)

// libraryHint is the advice for one typed error of sessfix's packages
// (nil for any other error). The packages report facts; this is the one
// place that turns them into what the user can do. within is the
// *backup.ApplyError the error tree holds, if any: a failure in the middle
// of a run left that one session as it was, not the whole store.
func libraryHint(err error, within *backup.ApplyError) []string {
	nothing := func(what string) string {
		if within != nil && len(within.Written) > 0 {
			return "session " + within.Session + " was left as it was"
		}
		return "nothing was " + what
	}
	switch e := err.(type) {
	case *store.ChangedError:
		if e.Restoring {
			return []string{"nothing was restored; OpenCode (or someone) is writing the session, run the undo again when it is quiet"}
		}
		return []string{nothing("written") + "; OpenCode (or someone) changed it, run sessfix again to plan from the current state"}
	case *store.HeldError:
		return []string{"wait for it to finish; if no sessfix is running, remove " + e.LockFile}
	case *store.BusyError:
		return []string{"close OpenCode or retry; " + nothing("changed")}
	case *store.DamagedError:
		return []string{
			"the database is damaged; sessfix wrote nothing and left it untouched",
			"keep a copy of it before anything else writes to it: cp -- " + ShellArg(e.Path) + " " + ShellArg(e.Path+".damaged"),
			"see the damage: " + store.DamageCommand(e.Path),
		}
	case *store.WriteError:
		state := nothing("changed")
		if !e.Unchanged {
			state = "see the error for what was left changed"
		}
		switch {
		case errors.Is(e, syscall.ENOSPC):
			return []string{diskFull + "; free some space and run sessfix again (" + state + ")"}
		case errors.Is(e, syscall.EROFS):
			return []string{"the store is on a read-only filesystem; remount it read-write or copy the store elsewhere (" + state + ")"}
		case errors.Is(e, fs.ErrPermission):
			return []string{permissionHint(e) + " (" + state + ")"}
		}
	case *store.ReadOnlyError:
		if e.Shape == store.ShapeSQLite2 {
			return []string{"sessfix scans OpenCode 2 databases and repairs nothing in them; to repair a session " +
				"OpenCode 1.x still reads, export it with OpenCode 1.x (opencode export), run sessfix fix on the " +
				"file and import it (docs/storage-shapes.md)"}
		}
		return []string{"sessfix scans this store and repairs nothing in it (docs/storage-shapes.md)"}
	case *backup.StateDirError:
		return []string{"set SESSFIX_STATE_DIR or XDG_STATE_HOME"}
	case *backup.JournalError:
		return []string{"sessfix backs up every edit before making it and writes nothing without a backup; free space in or fix permissions of the state directory, or set SESSFIX_STATE_DIR"}
	case *backup.StoreGoneError:
		return []string{
			"put the store back at " + e.Store.Path + " and run the undo again",
			"the records the run changed, as they were before it, are in " + e.Before,
		}
	case *backup.ApplyError:
		if n := len(e.Written); n > 0 && e.RunID != "" {
			return []string{fmt.Sprintf("%s %s %s written before the failure and %s repaired; `sessfix undo %s` reverts %s",
				plural.Word(n, "session", "sessions"), strings.Join(e.Written, ", "), plural.Word(n, "was", "were"),
				plural.Word(n, "stays", "stay"), e.RunID, plural.Word(n, "it", "them"))}
		}
	case *backup.RefusedError:
		return []string{"run again with --force to put back the backed-up bytes anyway (the later changes are lost)"}
	}
	return nil
}

// permissionHint says why a write was refused permission, from the owner of
// the file (or of the directory it was to be created in) that the error
// names: another user's file needs that user; one's own file, or any file
// when root is refused, has its write permission or an immutable flag
// against it.
func permissionHint(err error) string {
	path := ""
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &le):
		path = le.New
	case errors.As(err, &pe):
		path = pe.Path
	}
	p, fi := existing(path)
	if fi == nil {
		return "sessfix cannot write to the store; run it as the user who owns the files, or give that user write access"
	}
	owner, ok := fileOwner(fi)
	me := geteuid()
	switch {
	case (me == 0 || ok && owner == me) && immutable(p):
		// What `lsattr` shows as the i flag: a permission would not help.
		return p + " is immutable (lsattr shows its i flag), so no one may write it; lift the flag with `chattr -i " + ShellArg(p) + "`, or copy the store elsewhere"
	case !ok:
		return "sessfix cannot write " + p + "; run it as the user who owns it, or give that user write access"
	case me == 0:
		return "not even root may write " + p + ": it is immutable (see lsattr; chattr -i lifts it) or on a read-only mount"
	case owner != me:
		return p + " belongs to " + userName(owner) + ", not to you; run sessfix as " + userName(owner)
	}
	return p + " is yours but not writable; give it write permission (chmod u+w) or lift its immutable flag (lsattr, chattr -i)"
}

// geteuid is os.Geteuid (tests replace it).
var geteuid = os.Geteuid

// existing is path, or the nearest directory above it, that exists; ""
// and nil when none does.
func existing(path string) (string, fs.FileInfo) {
	for path != "" {
		if fi, err := os.Stat(path); err == nil {
			return path, fi
		}
		parent := filepath.Dir(path)
		if parent == path {
			break
		}
		path = parent
	}
	return "", nil
}

// userName is the login name of uid, or "uid N".
func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		return u.Username
	}
	return "uid " + strconv.Itoa(uid)
}
