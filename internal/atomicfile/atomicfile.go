package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/sessfix/sessfix/internal/faultpoint"
)

// Temporary files are named ".sessfix-<target>-<random digits>.tmp", next
// to the file <target> they replace (TempPrefix). Readers skip names
// starting with "." (they do not end in .json either); the name says which
// file a leftover was meant for, so the leftovers of one store's writes can
// be told from another's in a shared directory (two export files).
const (
	tempStart = ".sessfix-"
	tempEnd   = ".tmp"
	// tempTarget caps the target's name in a temporary file's name, so it
	// stays within the 255 bytes a name may have.
	tempTarget = 100
)

// TempPrefix is how the names of the temporary files written to replace
// path start: ".sessfix-", path's base name (its first 100 bytes, cut at a
// character boundary), "-".
func TempPrefix(path string) string {
	base := filepath.Base(path)
	if len(base) > tempTarget {
		cut := tempTarget
		for cut > 0 && !utf8.RuneStart(base[cut]) {
			cut--
		}
		base = base[:cut]
	}
	return tempStart + base + "-"
}

// Ops is every filesystem call the writers make. Production code uses
// OS; tests wrap it to inject faults (disk full, fsync errors, a crash
// before the rename, read-only files).
type Ops interface {
	CreateTemp(dir, pattern string) (TempFile, error)
	Rename(from, to string) error
	Remove(name string) error
	SyncDir(dir string) error
	MkdirAll(dir string, perm fs.FileMode) error
	Lstat(name string) (fs.FileInfo, error)
	ReadFile(name string) ([]byte, error)
	ReadDir(name string) ([]fs.DirEntry, error)
	Chown(name string, uid, gid int) error
}

// TempFile is the part of *os.File the atomic write uses.
type TempFile interface {
	io.Writer
	Name() string
	Sync() error
	Chmod(fs.FileMode) error
	Close() error
}

// OS is Ops on the real filesystem.
type OS struct{}

func (OS) CreateTemp(dir, pattern string) (TempFile, error) { return os.CreateTemp(dir, pattern) }
func (OS) Rename(from, to string) error                     { return hit(os.Rename(from, to), "rename "+to) }
func (OS) Remove(name string) error                         { return hit(os.Remove(name), "remove "+name) }
func (OS) MkdirAll(dir string, perm fs.FileMode) error      { return os.MkdirAll(dir, perm) }
func (OS) Lstat(name string) (fs.FileInfo, error)           { return os.Lstat(name) }
func (OS) ReadFile(name string) ([]byte, error)             { return os.ReadFile(name) }
func (OS) ReadDir(name string) ([]fs.DirEntry, error)       { return os.ReadDir(name) }
func (OS) Chown(name string, uid, gid int) error            { return os.Chown(name, uid, gid) }

// hit marks a step that changed the file system for fault injection
// (internal/faultpoint) and returns its error.
func hit(err error, what string) error {
	if err == nil {
		faultpoint.Hit(what)
	}
	return err
}

// SyncDir fsyncs a directory so that a file or directory created, renamed or
// removed in it is durable. Filesystems and systems that cannot sync
// directories (Windows) are not an error.
func SyncDir(dir string) error { return OS{}.SyncDir(dir) }

// SyncDir is the package's SyncDir.
func (OS) SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil && (errors.Is(err, syscall.EINVAL) || errors.Is(err, errors.ErrUnsupported)) {
		return nil
	}
	return err
}

// WriteFile replaces (or creates) path with data so that a reader or a
// crash sees either the old bytes or the new ones, never a mix: it writes a
// temporary file in the same directory, fsyncs and closes it, renames it over
// path and fsyncs the directory. An existing file keeps its mode (and, when
// running as root, its owner); a new file gets perm. Symlinks and non-regular
// files are refused. The temporary file is removed on every error path.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return Write(OS{}, path, data, perm, nil)
}

// Owner is a file owner to give a new file (nil: leave it to the process).
type Owner struct{ UID, GID int }

// Write is WriteFile over ops. When path exists its mode and owner win
// over perm and own.
func Write(ops Ops, path string, data []byte, perm fs.FileMode, own *Owner) error {
	return write(ops, path, data, perm, own, true)
}

// WriteMode is Write giving the file perm even when it exists with another
// mode (undo puts the old mode back).
func WriteMode(ops Ops, path string, data []byte, perm fs.FileMode, own *Owner) error {
	return write(ops, path, data, perm, own, false)
}

func write(ops Ops, path string, data []byte, perm fs.FileMode, own *Owner, keep bool) (err error) {
	dir := filepath.Dir(path)
	if fi, lerr := ops.Lstat(path); lerr == nil {
		if err := regularFile(path, fi); err != nil {
			return err
		}
		if keep {
			perm = fi.Mode().Perm()
		}
		if o := OwnerOf(fi); o != nil {
			own = o
		}
	} else if !errors.Is(lerr, fs.ErrNotExist) {
		return fmt.Errorf("write %s: %w", path, lerr)
	}
	tmp, err := ops.CreateTemp(dir, TempPrefix(path)+"*"+tempEnd)
	if err != nil {
		return fmt.Errorf("write %s: cannot create a temporary file in %s: %w", path, dir, bare(err))
	}
	tmpName := tmp.Name()
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				_ = tmp.Close()
			}
			_ = ops.Remove(tmpName)
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, bare(err))
	}
	if err = tmp.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: set mode %v: %w", path, perm, bare(err))
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: fsync: %w", path, bare(err))
	}
	closed = true
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, bare(err))
	}
	faultpoint.Hit("temp " + tmpName)
	if own != nil && os.Geteuid() == 0 {
		if err = ops.Chown(tmpName, own.UID, own.GID); err != nil {
			return fmt.Errorf("write %s: keep owner %d:%d: %w", path, own.UID, own.GID, bare(err))
		}
	}
	if err = ops.Rename(tmpName, path); err != nil {
		return fmt.Errorf("write %s: rename into place: %w", path, bare(err))
	}
	if err = ops.SyncDir(dir); err != nil {
		// The new bytes are in place; only their durability is in doubt.
		return fmt.Errorf("write %s: fsync directory %s: %w", path, dir, bare(err))
	}
	return nil
}

// Remove removes a regular file and fsyncs its directory. A missing file
// is not an error.
func Remove(ops Ops, path string) error {
	fi, err := ops.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	if err := regularFile(path, fi); err != nil {
		return err
	}
	if err := ops.Remove(path); err != nil {
		return fmt.Errorf("remove %s: %w", path, bare(err))
	}
	if err := ops.SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("remove %s: fsync directory: %w", path, err)
	}
	return nil
}

// ReadRegular reads a file the writers may replace: it must be a regular
// file, not a symlink. exists is false (with a nil error) when it is absent.
func ReadRegular(ops Ops, path string) (data []byte, mode fs.FileMode, exists bool, err error) {
	fi, err := ops.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, fmt.Errorf("read %s: %w", path, err)
	}
	if err := regularFile(path, fi); err != nil {
		return nil, 0, false, err
	}
	data, err = ops.ReadFile(path)
	if err != nil {
		return nil, 0, false, fmt.Errorf("read %s: %w", path, err)
	}
	return data, fi.Mode().Perm(), true, nil
}

// bare drops the path an *fs.PathError or *os.LinkError repeats, for
// messages that already name the file; errors.Is still sees the cause.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

func regularFile(path string, fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("refusing to write %s: it is a symlink; sessfix only replaces regular files inside the store", path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("refusing to write %s: not a regular file (%v)", path, fi.Mode().Type())
	}
	return nil
}

// MkdirLike creates dir and its missing parents with the mode of the nearest
// existing ancestor (0755 when that cannot be read), then fsyncs the parent
// of every directory it created.
func MkdirLike(ops Ops, dir string) error {
	if fi, err := ops.Lstat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("cannot create %s: a file (or symlink) with that name exists", dir)
		}
		return nil
	}
	var missing []string
	perm := fs.FileMode(0o755)
	var own *Owner
	for d := dir; ; {
		fi, err := ops.Lstat(d)
		if err == nil {
			if fi.IsDir() {
				perm = fi.Mode().Perm()
				own = OwnerOf(fi)
			}
			break
		}
		missing = append(missing, d)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if err := ops.MkdirAll(dir, perm); err != nil {
		return fmt.Errorf("create directory %s: %w", dir, err)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if own != nil && os.Geteuid() == 0 {
			// Directories sessfix creates as root belong to the store's owner.
			if err := ops.Chown(missing[i], own.UID, own.GID); err != nil {
				return fmt.Errorf("create directory %s: keep owner %d:%d: %w", missing[i], own.UID, own.GID, err)
			}
		}
		if err := ops.SyncDir(filepath.Dir(missing[i])); err != nil {
			return fmt.Errorf("create directory %s: fsync parent: %w", missing[i], err)
		}
	}
	return nil
}

// CleanTemps removes temporary files a crashed sessfix left in dir. Callers
// hold the writer lock of the store dir belongs to, so no live writer owns
// them.
func CleanTemps(ops Ops, dir string) {
	cleanTemps(ops, dir, IsTemp)
}

// CleanTempsOf removes the temporary files a crashed sessfix left while
// replacing path (TempPrefix), and no others: the directory may hold other
// stores' files (export files side by side). Callers hold path's writer
// lock.
func CleanTempsOf(ops Ops, path string) {
	cleanTemps(ops, filepath.Dir(path), func(name string) bool { return IsTempOf(name, path) })
}

func cleanTemps(ops Ops, dir string, ours func(string) bool) {
	ents, err := ops.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.Type().IsRegular() && ours(e.Name()) {
			_ = ops.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// IsTemp reports whether a file name is one of sessfix's temporary files
// (of any target, and of sessfix versions that named them
// ".sessfix-<digits>.tmp").
func IsTemp(name string) bool {
	return strings.HasPrefix(name, tempStart) && strings.HasSuffix(name, tempEnd) && len(name) > len(tempStart)+len(tempEnd)
}

// IsTempOf reports whether a file name is one of the temporary files
// written to replace path: TempPrefix(path) then digits and ".tmp".
func IsTempOf(name, path string) bool {
	rest, ok := strings.CutPrefix(name, TempPrefix(path))
	if !ok {
		return false
	}
	digits, ok := strings.CutSuffix(rest, tempEnd)
	return ok && digits != "" && strings.Trim(digits, "0123456789") == ""
}

// Temps lists sessfix's temporary files under root (a directory, walked
// without following symlinks), sorted.
func Temps(root string) []string {
	var out []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && IsTemp(d.Name()) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TempsOf lists the temporary files written to replace path (IsTempOf)
// in its directory, sorted.
func TempsOf(path string) []string {
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() && IsTempOf(e.Name(), path) {
			out = append(out, filepath.Join(filepath.Dir(path), e.Name()))
		}
	}
	return out
}
