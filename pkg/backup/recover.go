package backup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
)

// Rollback is a change set a killed sessfix left half-applied in a store,
// and what the next sessfix that took the store's writer lock did about
// it.
type Rollback struct {
	RunID   string
	Session string
	// Restored counts the records put back as they were before the run.
	Restored int
	// Refused, when set, lists the records that changed since the run was
	// killed: the change set was left as it is, for the user to undo with
	// --force or keep.
	Refused []Refusal
	// Database is the action of a database-level change ("salvage",
	// ...) in place of a session's change set; Finished says it was found
	// done and recorded so.
	Database string
	Finished bool
	// pending marks a change set Interrupted found: nothing was done yet.
	pending bool
}

// Done reports whether the change set was rolled back.
func (r Rollback) Done() bool { return !r.pending && len(r.Refused) == 0 }

// Message says what happened, as one lowercase line for stderr.
func (r Rollback) Message() string {
	if r.Database != "" {
		return r.databaseMessage()
	}
	killed := fmt.Sprintf("run %s was killed while it wrote session %s", r.RunID, r.Session)
	switch {
	case r.pending:
		return killed + "; a run that writes puts that session back as it was before it first, and plans from there"
	case len(r.Refused) > 0:
		return fmt.Sprintf("%s, and %s changed since (%s): left as it is", killed, r.Refused[0].Target, r.Refused[0].Reason)
	case r.Restored == 0:
		// A database's transaction, or a run killed before its first
		// write: SQLite or the kill left the session whole.
		return killed + "; nothing of it had been written, so this run starts from a whole session"
	}
	return fmt.Sprintf("%s; put its %d records back as they were before it, so this run starts from a whole session", killed, r.Restored)
}

// RecoverError says that what a killed sessfix left half-written in a
// store could not be looked for or put back: nothing is written to the
// store then.
type RecoverError struct {
	RunID, Session string
	Err            error
}

func (e *RecoverError) Error() string {
	if e.RunID == "" {
		return fmt.Sprintf("cannot look for a sessfix run killed while it wrote this store: %v; nothing was written", e.Err)
	}
	what := "session " + e.Session
	if e.Session == "" {
		what = "the database as a whole"
	}
	return fmt.Sprintf("run %s was killed while it wrote %s, and it cannot be put back: %v; nothing was written to the store (undo the run with `sessfix undo %s`)",
		e.RunID, what, e.Err, e.RunID)
}

func (e *RecoverError) Unwrap() error { return e.Err }

// interruptedState marks, in a manifest's raw bytes, a change set a run
// recorded and never finished: a cheap test before the manifest is parsed.
var interruptedState = []byte(`"state": "` + StateRecorded + `"`)

// Recover rolls back the change sets that killed sessfix runs left
// half-applied in the store info names (their manifest entry still
// "recorded"), so that a command that writes the store starts from whole
// sessions: a JSON store written file by file can hold a session half
// changed. Each such change set is put back, byte for byte, to what it
// was before the run, and recorded as failed ("rolled back"); the run's
// other change sets stay applied, undoable as before. A change set with a
// record that changed since the kill is left alone and returned with the
// refusal. On a database nothing is half-applied (a change set is one
// transaction): its targets are as before and the entry is only marked.
//
// The caller holds the store's writer lock, so no other sessfix is
// writing it. Runs whose manifest cannot be read are passed over.
func Recover(ctx context.Context, opts Options, info store.Info) ([]Rollback, error) {
	out, err := recoverDatabases(opts, info, false)
	if err != nil {
		return out, err
	}
	err = interrupted(opts, info, func(dir string, m *Manifest, s *SessionEntry) error {
		rb, err := rollBack(ctx, opts, dir, m, s)
		if err != nil {
			return &RecoverError{RunID: m.RunID, Session: s.SessionID, Err: err}
		}
		out = append(out, rb)
		return nil
	})
	return out, err
}

// Interrupted lists, changing nothing, the change sets killed sessfix runs
// left half-applied in the store info names: what the next Lock of it puts
// back first (a dry run says so). Only RunID and Session are set.
func Interrupted(opts Options, info store.Info) ([]Rollback, error) {
	out, err := recoverDatabases(opts, info, true)
	if err != nil {
		return out, err
	}
	err = interrupted(opts, info, func(_ string, m *Manifest, s *SessionEntry) error {
		out = append(out, Rollback{RunID: m.RunID, Session: s.SessionID, pending: true})
		return nil
	})
	return out, err
}

// interrupted calls fn with every change set of the store info names that
// a run recorded and never finished, with its run's folder and manifest,
// oldest run first. Runs whose manifest cannot be read are passed over.
func interrupted(opts Options, info store.Info, fn func(dir string, m *Manifest, s *SessionEntry) error) error {
	return storeRuns(opts, info, [][]byte{interruptedState}, func(dir string, m *Manifest) error {
		for _, s := range m.Sessions {
			if s.State != StateRecorded {
				continue
			}
			if err := fn(dir, m, s); err != nil {
				return err
			}
		}
		return nil
	})
}

// storeRuns calls fn with the folder and manifest of every run of the
// store info names that is not undone and whose manifest holds each of
// marks (a cheap test of its raw bytes before it is parsed), oldest first.
// Runs whose manifest cannot be read are passed over.
func storeRuns(opts Options, info store.Info, marks [][]byte, fn func(dir string, m *Manifest) error) error {
	base, err := opts.backupsDir()
	if err != nil {
		return &RecoverError{Err: err}
	}
	ents, err := os.ReadDir(base)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &RecoverError{Err: fmt.Errorf("cannot list backups in %s: %w", base, err)}
	}
	path := info.Path
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	for _, e := range ents {
		if !e.IsDir() || !runIDPattern.MatchString(e.Name()) {
			continue
		}
		dir := filepath.Join(base, e.Name())
		file := filepath.Join(dir, "manifest.json")
		raw, err := os.ReadFile(file)
		if err != nil || !containsAll(raw, marks) {
			continue
		}
		m, err := parseManifest(file, raw)
		if err != nil || m.Undone != nil || m.Store.Path != path || m.Store.Shape != info.Shape {
			continue
		}
		if err := fn(dir, m); err != nil {
			return err
		}
	}
	return nil
}

func containsAll(raw []byte, marks [][]byte) bool {
	for _, m := range marks {
		if !bytes.Contains(raw, m) {
			return false
		}
	}
	return true
}

// rollBack puts one half-applied change set s of run m (in dir) back.
func rollBack(ctx context.Context, opts Options, dir string, m *Manifest, s *SessionEntry) (Rollback, error) {
	rb := Rollback{RunID: m.RunID, Session: s.SessionID}
	w, err := shapes.OpenWriter(m.Store, opts.Write)
	if err != nil {
		return rb, err
	}
	defer w.Close()
	order, plans := targetPlans([]*SessionEntry{s})
	current, err := w.Read(ctx, planTargets(order, plans))
	if err != nil {
		return rb, err
	}
	rs, err := planRestore(dir, order, plans, current, false)
	if err != nil {
		return rb, err
	}
	if len(rs.refused) > 0 {
		rb.Refused = rs.refused
		return rb, nil
	}
	if len(rs.restore)+len(rs.tidy) > 0 {
		if err := w.Restore(ctx, append(rs.restore[:len(rs.restore):len(rs.restore)], rs.tidy...)); err != nil {
			return rb, err
		}
	}
	rb.Restored = len(rs.restore)
	// What the change set left is now what it found: undo of the run
	// sees its targets as before.
	for i := range s.Images {
		s.Images[i].SHA256After, s.Images[i].ExistsAfter = s.Images[i].SHA256Before, s.Images[i].Existed
	}
	s.State = StateFailed
	s.Error = fmt.Sprintf("sessfix was killed while it wrote this session; rolled back at %s by the next sessfix that wrote the store",
		opts.now().UTC().Format(time.RFC3339))
	if err := saveManifest(dir, m); err != nil {
		return rb, fmt.Errorf("it was put back, but %w", err)
	}
	return rb, nil
}

// Lock takes the writer lock of the store info names and then rolls back
// what killed sessfix runs left half-applied in it (Recover): every
// command that writes a store takes its lock here, so the next one after
// a kill starts from whole sessions. A failed roll-back releases the lock
// and returns the error: nothing is written over a half-applied change
// set. The rollbacks are for the caller to report.
func Lock(ctx context.Context, opts Options, info store.Info) (*store.Lock, []Rollback, error) {
	lock, err := store.AcquireLock(info)
	if err != nil {
		return nil, nil, err
	}
	rbs, err := Recover(ctx, opts, info)
	if err != nil {
		if rerr := lock.Release(); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return nil, rbs, err
	}
	return lock, rbs, nil
}
