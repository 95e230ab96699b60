package backup

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/sqlite/salvage"
)

// recoverDatabases finishes or puts back the database-level changes that
// killed sessfix runs left recorded in the store info names (Recover):
// a salvage whose new file is in place with the old log gone is finished
// (recorded as applied); anything else is put back from the backup, byte
// for byte, and recorded as failed. The salvage's temporary file is
// removed either way. While another program has the database open
// nothing is done and the error says so.
func recoverDatabases(opts Options, info store.Info, dry bool) ([]Rollback, error) {
	var out []Rollback
	err := eachRun(opts, info, func(dir string, m *Manifest) error {
		e := m.Database
		if e == nil || e.State != StateRecorded {
			return nil
		}
		if dry {
			out = append(out, Rollback{RunID: m.RunID, Database: e.Action, pending: true})
			return nil
		}
		rb, err := rollBackDatabase(opts, dir, m)
		if err != nil {
			return &RecoverError{RunID: m.RunID, Err: err}
		}
		out = append(out, rb)
		return nil
	})
	return out, err
}

// databaseEntry marks, in a manifest's raw bytes, a run with a
// database-level change: a cheap test before the manifest is parsed.
var databaseEntry = []byte(`"database": {`)

// eachRun calls fn with the folder and manifest of every run of the store
// info names that holds a database-level change still recorded, whose
// manifest can be read and that is not undone, oldest first.
func eachRun(opts Options, info store.Info, fn func(dir string, m *Manifest) error) error {
	return storeRuns(opts, info, [][]byte{databaseEntry, interruptedState}, fn)
}

// rollBackDatabase finishes or puts back one killed database-level change.
func rollBackDatabase(opts Options, dir string, m *Manifest) (Rollback, error) {
	e, path := m.Database, m.Store.Path
	rb := Rollback{RunID: m.RunID, Database: e.Action}
	if a := salvage.Activity(path); a.State == store.ActivityOpen || a.State == store.ActivityWriting {
		// Files are not swapped under a program that has them open.
		return rb, &DatabaseInUseError{Path: path, Activity: a}
	}
	if e.Temp != "" {
		if err := os.Remove(e.Temp); err != nil && !os.IsNotExist(err) {
			return rb, err
		}
	}
	cur, _, err := hashFile(path)
	if err != nil {
		return rb, err
	}
	when := opts.now().UTC().Format(time.RFC3339)
	switch {
	case e.PlannedSHA256 != "" && cur == e.PlannedSHA256 && !exists(path+"-wal"):
		// The swap was done: only the manifest was not told.
		rb.Finished = true
		e.State = StateApplied
	case asBeforeFiles(e, path):
		e.State, e.Error = StateFailed, "sessfix was killed before it changed the database; found as it was at "+when
	case e.Action == ActionSalvage && cur != e.Files[0].SHA256Before && cur != e.PlannedSHA256:
		rb.Refused = []Refusal{{Target: store.Target{Path: path}, Reason: "it holds bytes that are neither the original nor the salvage"}}
		return rb, nil
	default:
		if err := restoreDatabase(dir, path, e); err != nil {
			return rb, err
		}
		for _, f := range e.Files {
			if f.Existed {
				rb.Restored++
			}
		}
		e.State, e.Error = StateFailed, "sessfix was killed while it repaired the database; put back at "+when+" by the next sessfix that wrote the store"
	}
	if err := readAfter(e, path); err != nil {
		return rb, err
	}
	if err := saveManifest(dir, m); err != nil {
		return rb, fmt.Errorf("it was put back, but %w", err)
	}
	return rb, nil
}

// databaseMessage is Rollback.Message for a database-level change.
func (r Rollback) databaseMessage() string {
	killed := fmt.Sprintf("run %s was killed during the database's %s", r.RunID, r.Database)
	switch {
	case r.pending:
		return killed + "; a run that writes finishes it or puts the database back first"
	case len(r.Refused) > 0:
		return fmt.Sprintf("%s, and %s changed since (%s): left as it is", killed, r.Refused[0].Target, r.Refused[0].Reason)
	case r.Finished:
		return killed + " after it was done; recorded it as done"
	case r.Restored == 0:
		return killed + "; nothing of it had been written"
	}
	return fmt.Sprintf("%s; put its %s back as they were before it", killed, plural.Count(r.Restored, "file", "files"))
}

// leftByKill reports whether a file of a salvage killed before it could
// record what it left (e still recorded) is what the salvage itself made
// of it: the database the finished salvage, the -wal removed.
func leftByKill(e *DatabaseEntry, f DatabaseFile, sum string, exists bool) bool {
	switch {
	case e.Action != ActionSalvage:
		return false
	case f.Suffix == "":
		return e.PlannedSHA256 != "" && sum == e.PlannedSHA256
	}
	return !exists
}

// asBeforeFiles reports whether every file of the database is as before
// the run.
func asBeforeFiles(e *DatabaseEntry, path string) bool {
	for _, f := range e.Files {
		sum, ok, err := hashFile(path + f.Suffix)
		if err != nil || ok != f.Existed || sum != f.SHA256Before {
			return false
		}
	}
	return true
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// undoDatabase puts back the files of a run's database-level change, byte
// for byte. It refuses (a *RefusedError, nothing restored) when the
// database or its -wal is neither as the run left it nor as before it
// (OpenCode wrote it since), unless force, and always while another
// program has the database open. The -shm, SQLite's index of the -wal, is
// put back with them and never refuses. A run that recorded nothing (a
// sessfix killed right after it began the run) is only marked undone. The
// caller holds the writer lock (undoLocked, under a Tx).
func undoDatabase(ctx context.Context, opts Options, dir string, m *Manifest, res *UndoResult, force bool) (*UndoResult, error) {
	e, path := m.Database, m.Store.Path
	if e == nil {
		m.Undone = &UndoneEntry{Time: opts.now().UTC(), Version: store.SessfixVersion()}
		if err := saveManifest(dir, m); err != nil {
			return res, err
		}
		res.Message = fmt.Sprintf("run %s recorded no change; marked it undone", m.RunID)
		return res, nil
	}
	if err := checkIdle(path, func() store.Activity { return salvage.Activity(path) }); err != nil {
		return nil, fmt.Errorf("cannot undo run %s: %w", m.RunID, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	changed := false
	for _, f := range e.Files {
		sum, ok, err := hashFile(path + f.Suffix)
		if err != nil {
			return nil, fmt.Errorf("cannot undo run %s: %w", m.RunID, err)
		}
		t := store.Target{Path: path + f.Suffix}
		switch {
		case ok == f.Existed && sum == f.SHA256Before:
			res.Unchanged++
			continue
		case f.Suffix == "-shm", e.State != StateRecorded && ok == f.ExistsAfter && sum == f.SHA256After:
		case e.State == StateRecorded && leftByKill(e, f, sum, ok):
		default:
			res.Refused = append(res.Refused, Refusal{Target: t, Reason: "it changed since the run (OpenCode wrote the database?)"})
		}
		changed = true
		if f.Existed || ok {
			res.Restored = append(res.Restored, t)
		}
	}
	if len(res.Refused) > 0 && !force {
		return res, &RefusedError{RunID: m.RunID, Refused: res.Refused}
	}
	if e.Temp != "" {
		if err := os.Remove(e.Temp); err != nil && !os.IsNotExist(err) {
			return res, fmt.Errorf("undo run %s: %w", m.RunID, err)
		}
	}
	if changed {
		if err := restoreDatabase(dir, path, e); err != nil {
			return res, fmt.Errorf("undo run %s: %w", m.RunID, err)
		}
	}
	m.Undone = &UndoneEntry{Time: opts.now().UTC(), Version: store.SessfixVersion(), Forced: force && len(res.Refused) > 0, Restored: len(res.Restored)}
	if err := saveManifest(dir, m); err != nil {
		return res, fmt.Errorf("run %s was undone, but %w", m.RunID, err)
	}
	res.Message = fmt.Sprintf("undid run %s: restored %s of the database %s as before its %s",
		m.RunID, plural.Count(len(res.Restored), "file", "files"), path, e.Action)
	if !changed {
		res.Message = fmt.Sprintf("run %s changed nothing that is still different; marked it undone", m.RunID)
	}
	return res, nil
}
