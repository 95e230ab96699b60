package backup

import (
	"context"
	"errors"

	"github.com/sessfix/sessfix/pkg/store"
)

// Tx is a write transaction on one store, the one way sessfix writes a
// store: fix, drop, rewind, fork and watch apply change sets through it
// (pkg/fix's Tx is built on it), undo restores runs through it. BeginTx
// opens it, Apply backs up and writes change sets in one run, Undo puts a
// run back, Close ends it.
//
// A writing transaction holds the store's writer lock from BeginTx to
// Close (Lock, which first rolls back what a killed sessfix left
// half-written). A dry-run transaction takes no lock and writes nothing:
// its Apply returns at once, and it refuses to Undo.
type Tx struct {
	opts Options
	info store.Info
	dry  bool
	lock *store.Lock
}

// errClosed is the failure of a write through a closed transaction.
var errClosed = errors.New("write transaction used after it was closed")

// BeginTx opens a transaction on the store info names. A writing one takes
// the store's writer lock through Lock: an error wrapping store.ErrLocked
// when another sessfix holds it, a *RecoverError when what a killed run
// left half-written cannot be rolled back. The rollbacks Lock made are
// returned, on failure too, for the caller to report. A dry run takes no
// lock and returns no rollbacks (Interrupted says what the first run that
// writes will roll back).
func BeginTx(ctx context.Context, opts Options, info store.Info, dryRun bool) (*Tx, []Rollback, error) {
	tx := &Tx{opts: opts, info: info, dry: dryRun}
	if dryRun {
		return tx, nil, nil
	}
	lock, rbs, err := Lock(ctx, opts, info)
	if err != nil {
		return nil, rbs, err
	}
	tx.lock = lock
	return tx, rbs, nil
}

// Info names the store the transaction writes.
func (tx *Tx) Info() store.Info { return tx.info }

// DryRun reports whether the transaction writes nothing.
func (tx *Tx) DryRun() bool { return tx.dry }

// Held reports whether the transaction holds the store's writer lock: a
// writing one, not closed yet.
func (tx *Tx) Held() bool { return tx.lock != nil }

// Target is the store sets are written to: the transaction's, or the one
// they name when it is another (a fork of an export file is a new file
// next to it, written under the export's lock).
func (tx *Tx) Target(sets []*store.ChangeSet) store.Info {
	if len(sets) > 0 {
		if to := sets[0].Store; to.Path != "" && to.Path != tx.info.Path {
			return to
		}
	}
	return tx.info
}

// Apply backs up and applies sets in one backup run (the package's Apply,
// to Target(sets)) and returns its run id ("" when nothing was written;
// set on failure too when something was). A dry run writes nothing and
// returns "".
func (tx *Tx) Apply(ctx context.Context, sets []*store.ChangeSet) (runID string, err error) {
	if tx.dry {
		return "", nil
	}
	if tx.lock == nil {
		return "", errClosed
	}
	return Apply(ctx, tx.opts, tx.Target(sets), sets)
}

// Undo restores, byte for byte, what run runID changed in the
// transaction's store (undo's body: see the package's Undo for what it
// refuses). A run of another store is refused, and so is an Undo in a dry
// run: undo has no dry run.
func (tx *Tx) Undo(ctx context.Context, runID string, force bool) (*UndoResult, error) {
	if tx.dry {
		return nil, errors.New("undo has no dry run")
	}
	if tx.lock == nil {
		return nil, errClosed
	}
	return undoLocked(ctx, tx.opts, tx.info, runID, force)
}

// Close ends the transaction, releasing the writer lock of a writing one.
// Closing twice is harmless.
func (tx *Tx) Close() error {
	if tx == nil || tx.lock == nil {
		return nil
	}
	l := tx.lock
	tx.lock = nil
	return l.Release()
}

// ApplyDatabase writes a database-level change (the package's
// ApplyDatabase: the files backed up whole, then the salvage, reindex or
// checkpoint) in one run of its own, under the held lock. A dry run
// writes nothing.
func (tx *Tx) ApplyDatabase(ctx context.Context, ch DatabaseChange) (string, error) {
	if tx.dry {
		return "", nil
	}
	if tx.lock == nil {
		return "", errClosed
	}
	return ApplyDatabase(ctx, tx.opts, tx.info, ch)
}
