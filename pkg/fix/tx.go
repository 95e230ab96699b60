package fix

import (
	"context"
	"errors"
	"slices"

	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
)

// Tx is a write transaction on one store: every command that writes a
// store (fix, watch, drop, rewind, fork) plans and writes through one.
// Begin opens it, Apply writes plans in one backup run and reads them back,
// Close ends it.
//
// A writing transaction holds the store's writer lock from Begin to Close
// (backup.Lock, which first rolls back what a killed sessfix left
// half-written): the plans made while it is open are never older than
// another sessfix's writes. A dry-run transaction takes no lock and writes
// nothing: its Apply returns at once, as if the plans had been written to
// a store that keeps nothing.
type Tx struct {
	st   store.Store
	opts WriteOptions
	dry  bool
	lock *store.Lock
}

// Begin opens a transaction on st. A store sessfix never writes (an
// OpenCode 2 database) is refused up front (shapes.CheckWritable), dry run
// or not: a plan would promise a repair the writer then refuses.
//
// A writing transaction takes the store's writer lock through backup.Lock:
// an error wrapping store.ErrLocked when another sessfix holds it, a
// *backup.RecoverError when what a killed run left half-written cannot be
// rolled back. What was rolled back goes to opts.Rollbacks. A dry run
// passes opts.Rollbacks what the first run that writes will roll back
// (backup.Interrupted) instead, and opts.Warn a journal it cannot read.
func Begin(ctx context.Context, st store.Store, opts WriteOptions, dryRun bool) (*Tx, error) {
	info := st.Info()
	if err := shapes.CheckWritable(info); err != nil {
		return nil, err
	}
	tx := &Tx{st: st, opts: opts, dry: dryRun}
	if dryRun {
		rbs, err := backup.Interrupted(opts.Backup, info)
		switch {
		case err != nil && opts.Warn != nil:
			opts.Warn(err)
		case err == nil && opts.Rollbacks != nil:
			opts.Rollbacks(rbs)
		}
		return tx, nil
	}
	lock, rbs, err := backup.Lock(ctx, opts.Backup, info)
	if opts.Rollbacks != nil {
		opts.Rollbacks(rbs)
	}
	if err != nil {
		return nil, err
	}
	tx.lock = lock
	return tx, nil
}

// Store is the store the transaction writes.
func (tx *Tx) Store() store.Store { return tx.st }

// DryRun reports whether the transaction writes nothing.
func (tx *Tx) DryRun() bool { return tx.dry }

// Apply writes the plans that change something in one backup run (so
// `sessfix undo RUN` reverts it) and verifies every written session from
// disk. It returns the run id, set on failure too when something was
// written, so it can be undone. A dry run writes nothing and returns "".
// Nothing is begun once ctx has ended; once writing has begun it is not
// interrupted: a change set is either applied whole or not at all.
func (tx *Tx) Apply(ctx context.Context, plans []Outcome) (run string, err error) {
	if tx.dry || !slices.ContainsFunc(plans, Outcome.Changes) {
		return "", nil
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return tx.apply(ctx, plans)
}

// apply is Apply once the caller decided to write.
func (tx *Tx) apply(ctx context.Context, plans []Outcome) (string, error) {
	if tx.dry {
		return "", nil
	}
	if tx.lock == nil {
		return "", errors.New("write transaction used after it was closed")
	}
	run, err := writeLocked(ctx, tx.st, plans, tx.opts)
	return verify(ctx, tx.st, plans, tx.opts, run, err)
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
