package backup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sessfix/sessfix/internal/atomicfile"
	"github.com/sessfix/sessfix/internal/faultpoint"
	"github.com/sessfix/sessfix/pkg/store"
)

// A database-level change repairs a SQLite database as a whole (its
// pages, its write-ahead log), not its records: its backup is the
// database file, its -wal and its -shm, copied byte for byte into the run
// folder before anything is written, and its undo copies them back.
//
// A run holds either change sets of records (Manifest.Sessions) or one
// database-level change (Manifest.Database), never both.

// Database-level change actions.
const (
	// ActionSalvage copies every readable row into a new file beside the
	// database and swaps it in, removing the old -wal and -shm.
	ActionSalvage = "salvage"
	// ActionReindex rebuilds the indexes in place.
	ActionReindex = "reindex"
	// ActionCheckpoint merges the -wal into the database and truncates it.
	ActionCheckpoint = "checkpoint"
	// ActionVacuum rewrites the database in place without its free pages.
	ActionVacuum = "vacuum"
)

// DatabaseEntry is a run's database-level change in its manifest.
type DatabaseEntry struct {
	// Action is ActionSalvage, ActionReindex, ActionCheckpoint or
	// ActionVacuum; Rule the finding's code it repairs.
	Action string `json:"action"`
	Rule   string `json:"rule,omitempty"`
	// State is StateRecorded (backed up, about to write: a run that stops
	// here was killed), StateApplied or StateFailed (put back).
	State string `json:"state"`
	Error string `json:"error,omitempty"`
	// Temp is the file a salvage writes beside the database before the
	// swap (absolute); PlannedSHA256 hashes it once written, before the
	// swap: a database with these bytes and no -wal is a finished swap.
	Temp          string `json:"temp,omitempty"`
	PlannedSHA256 string `json:"planned_sha256,omitempty"`
	// Files are the database (Suffix ""), its -wal and its -shm.
	Files []DatabaseFile `json:"files"`
}

// DatabaseFile is the saved state of one of a database's files.
type DatabaseFile struct {
	// Suffix is "" for the database, "-wal" or "-shm".
	Suffix string `json:"suffix"`
	// Existed is whether the file existed before the run; File holds its
	// bytes, relative to the run folder.
	Existed bool        `json:"existed"`
	File    string      `json:"file,omitempty"`
	Mode    fs.FileMode `json:"mode,omitempty"`
	// SHA256Before hashes it before the run, SHA256After what the run left
	// ("" when absent, ExistsAfter false).
	SHA256Before string `json:"sha256_before,omitempty"`
	SHA256After  string `json:"sha256_after,omitempty"`
	ExistsAfter  bool   `json:"exists_after,omitempty"`
}

// databaseSuffixes are the files of a SQLite database in WAL mode.
var databaseSuffixes = []string{"", "-wal", "-shm"}

// DatabaseChange is a database-level change for ApplyDatabase.
type DatabaseChange struct {
	// Action is ActionSalvage, ActionReindex, ActionCheckpoint or
	// ActionVacuum; Rule the code of the finding it repairs.
	Action, Rule string
	// Write makes the change. A salvage writes the new database at dst,
	// which does not exist, and leaves the database alone; the others
	// change the database at path in place (dst is path).
	Write func(ctx context.Context, path, dst string) error
	// Activity, when set, says whether another program holds the
	// database: asked before the backup and again before the swap, and
	// anything but store.ActivityNone refuses with a *DatabaseInUseError.
	Activity func() store.Activity
}

// DatabaseInUseError refuses a database-level change while another
// program (OpenCode) has the database open, or while that cannot be
// seen: nothing was changed. It is a store.ErrLocked.
type DatabaseInUseError struct {
	Path     string
	Activity store.Activity
}

func (e *DatabaseInUseError) Error() string {
	return fmt.Sprintf("cannot repair the database %s while it may be in use: %s; nothing was changed (quit OpenCode and run sessfix again)",
		e.Path, e.Activity)
}

func (e *DatabaseInUseError) Unwrap() error { return store.ErrLocked }

func checkIdle(path string, activity func() store.Activity) error {
	if activity == nil {
		return nil
	}
	if a := activity(); a.State != store.ActivityNone && a.State != store.ActivityNever {
		return &DatabaseInUseError{Path: path, Activity: a}
	}
	return nil
}

// ApplyDatabase backs up the database info names (the file, its -wal and
// -shm, byte for byte) in a new run and then makes the change: a salvage
// is written beside the database and swapped in (the old -wal and -shm
// are removed first, then the new file is renamed over the database); the
// other actions write in place. The caller holds the store's writer lock
// (Lock). A run killed at any step is finished or put back by the next
// Lock (Recover). It returns the run id, "" when nothing was written.
//
// A change that fails puts the files back from the backup and is recorded
// as failed; a salvage that fails before the swap changed nothing and
// leaves no run.
func ApplyDatabase(ctx context.Context, opts Options, info store.Info, ch DatabaseChange) (runID string, err error) {
	path, err := filepath.Abs(info.Path)
	if err != nil {
		return "", err
	}
	if err := checkIdle(path, ch.Activity); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	j, err := Begin(opts, info)
	if err != nil {
		return "", err
	}
	e := &DatabaseEntry{Action: ch.Action, Rule: ch.Rule, State: StateRecorded}
	if ch.Action == ActionSalvage {
		e.Temp = path + ".sessfix-" + j.ID()
	}
	for _, suf := range databaseSuffixes {
		f, err := backupDatabaseFile(j.dir, path, suf)
		if err != nil {
			os.RemoveAll(j.dir)
			return "", backupError(err)
		}
		e.Files = append(e.Files, f)
	}
	j.m.Database = e
	if err := j.save(); err != nil {
		os.RemoveAll(j.dir)
		return "", err
	}
	hitStep("database backed up")
	if ch.Action == ActionSalvage {
		return j.ID(), swapIn(ctx, j, path, ch)
	}
	if werr := ch.Write(ctx, path, path); werr != nil {
		return j.ID(), failDatabase(j, path, werr)
	}
	return j.ID(), finishDatabase(j, path)
}

// swapIn writes the salvage beside the database and swaps it in.
func swapIn(ctx context.Context, j *Journal, path string, ch DatabaseChange) error {
	e := j.m.Database
	if err := ch.Write(ctx, path, e.Temp); err != nil {
		os.Remove(e.Temp)
		os.RemoveAll(j.dir) // nothing was written
		j.m.Database = nil
		return err
	}
	sum, _, err := hashFile(e.Temp)
	if err == nil {
		e.PlannedSHA256 = sum
		err = j.save()
	}
	if err == nil {
		err = checkIdle(path, ch.Activity)
	}
	if err != nil {
		os.Remove(e.Temp)
		os.RemoveAll(j.dir)
		j.m.Database = nil
		return err
	}
	hitStep("salvage written")
	// The old log must not meet the new file: a -wal left beside it
	// would be replayed into it. So the log goes first; a run killed
	// before the rename is put back from the backup.
	for _, suf := range []string{"-wal", "-shm"} {
		if err := os.Remove(path + suf); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return failDatabase(j, path, err)
		}
	}
	hitStep("database log removed")
	if err := os.Rename(e.Temp, path); err != nil {
		return failDatabase(j, path, err)
	}
	if err := atomicfile.SyncDir(filepath.Dir(path)); err != nil {
		return failDatabase(j, path, err)
	}
	hitStep("database swapped")
	return finishDatabase(j, path)
}

// finishDatabase records what the change left.
func finishDatabase(j *Journal, path string) error {
	e := j.m.Database
	if err := readAfter(e, path); err != nil {
		return fmt.Errorf("the database was repaired, but %w", err)
	}
	e.State = StateApplied
	return j.save()
}

// failDatabase puts the database's files back after a change that failed
// part-way and records the run as failed.
func failDatabase(j *Journal, path string, cause error) error {
	e := j.m.Database
	if e.Temp != "" {
		os.Remove(e.Temp)
	}
	if err := restoreDatabase(j.dir, path, e); err != nil {
		return fmt.Errorf("%w; and the database could not be put back (undo the run with `sessfix undo %s`): %v", cause, j.ID(), err)
	}
	if err := readAfter(e, path); err != nil {
		return errors.Join(cause, err)
	}
	e.State, e.Error = StateFailed, cause.Error()+"; the database was put back as it was"
	if err := j.save(); err != nil {
		return errors.Join(cause, err)
	}
	return fmt.Errorf("%w; the database was put back as it was", cause)
}

// readAfter hashes the database's files as the change left them.
func readAfter(e *DatabaseEntry, path string) error {
	for i := range e.Files {
		f := &e.Files[i]
		sum, exists, err := hashFile(path + f.Suffix)
		if err != nil {
			return fmt.Errorf("cannot read back %s%s: %w", path, f.Suffix, err)
		}
		f.SHA256After, f.ExistsAfter = sum, exists
	}
	return nil
}

// backupDatabaseFile copies path+suffix, when it exists, into the run
// folder dir.
func backupDatabaseFile(dir, path, suffix string) (DatabaseFile, error) {
	f := DatabaseFile{Suffix: suffix}
	fi, err := os.Stat(path + suffix)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("cannot back up %s%s: %w", path, suffix, err)
	}
	name := "database"
	if suffix != "" {
		name += suffix
	}
	f.Existed, f.Mode, f.File = true, fi.Mode().Perm(), filepath.Join("before", name)
	sum, err := copyFile(path+suffix, filepath.Join(dir, f.File), 0o600, nil)
	if err != nil {
		return f, fmt.Errorf("cannot back up %s%s: %w", path, suffix, err)
	}
	f.SHA256Before = sum
	return f, nil
}

// restoreDatabase puts every file of e back as it was before the run:
// the -wal and -shm are removed first (neither may meet a database it
// does not belong to), the database is renamed into place, then the old
// -wal and -shm are.
func restoreDatabase(dir, path string, e *DatabaseEntry) error {
	for _, suf := range []string{"-wal", "-shm"} {
		if err := os.Remove(path + suf); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	// The files put back keep the database's owner (the one the
	// repair kept), or the owner of its directory.
	var own *atomicfile.Owner
	if fi, err := os.Stat(path); err == nil {
		own = atomicfile.OwnerOf(fi)
	} else if fi, err := os.Stat(filepath.Dir(path)); err == nil {
		own = atomicfile.OwnerOf(fi)
	}
	for _, f := range e.Files {
		if !f.Existed {
			continue
		}
		src := filepath.Join(dir, f.File)
		if sum, _, err := hashFile(src); err != nil || sum != f.SHA256Before {
			return fmt.Errorf("the backup %s is not the one recorded (%v)", src, err)
		}
		if _, err := copyFile(src, path+f.Suffix, f.Mode, own); err != nil {
			return err
		}
	}
	return atomicfile.SyncDir(filepath.Dir(path))
}

// copyFile copies src to dst through a synced temporary file in dst's
// directory renamed into place, with the mode perm and the owner own (when
// set and sessfix runs as root), and returns the bytes' SHA-256.
func copyFile(src, dst string, perm fs.FileMode, own *atomicfile.Owner) (sum string, err error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.CreateTemp(filepath.Dir(dst), atomicfile.TempPrefix(dst)+"*.tmp")
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			out.Close()
			os.Remove(out.Name())
		}
	}()
	h := sha256.New()
	if _, err = io.Copy(io.MultiWriter(out, h), in); err != nil {
		return "", err
	}
	if err = out.Chmod(perm); err != nil {
		return "", err
	}
	if err = atomicfile.Chown(out.Name(), own); err != nil {
		return "", err
	}
	if err = out.Sync(); err != nil {
		return "", err
	}
	if err = out.Close(); err != nil {
		return "", err
	}
	if err = os.Rename(out.Name(), dst); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), atomicfile.SyncDir(filepath.Dir(dst))
}

// hashFile hashes a file's bytes; "" and false when it does not exist.
func hashFile(path string) (string, bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", true, err
	}
	return hex.EncodeToString(h.Sum(nil)), true, nil
}

// killAt, when set (by tests), stops ApplyDatabase after a step as a kill
// would: it panics, and nothing is cleaned up.
var killAt func(step string) bool

// hitStep marks a step of a database-level change for the killed-run
// tests.
func hitStep(step string) {
	faultpoint.Hit(step)
	if killAt != nil && killAt(step) {
		panic(killed(step))
	}
}

// killed is what a stopped ApplyDatabase panics with in tests.
type killed string
