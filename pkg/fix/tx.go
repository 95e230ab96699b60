package fix

import (
	"context"
	"slices"

	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
)

// Tx is a write transaction on one store for the commands that plan
// repairs (fix, watch, drop, rewind, fork): a backup.Tx, the one
// transaction every command that writes goes through (undo too), with the
// store its plans were made from, so that what it writes is verified from
// disk. Begin opens it, Apply writes plans in one backup run and reads
// them back, Close ends it.
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
	b    *backup.Tx
}

// Begin opens a transaction on st. A store sessfix never writes (an
// OpenCode 2 database) is refused up front (shapes.CheckWritable), dry run
// or not: a plan would promise a repair the writer then refuses.
//
// A writing transaction takes the store's writer lock (backup.BeginTx):
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
	b, rbs, err := backup.BeginTx(ctx, opts.Backup, info, dryRun)
	if dryRun {
		pending, ierr := backup.Interrupted(opts.Backup, info)
		switch {
		case ierr != nil && opts.Warn != nil:
			opts.Warn(ierr)
		case ierr == nil && opts.Rollbacks != nil:
			opts.Rollbacks(pending)
		}
	} else if opts.Rollbacks != nil {
		opts.Rollbacks(rbs)
	}
	if err != nil {
		return nil, err
	}
	return &Tx{st: st, opts: opts, b: b}, nil
}

// Store is the store the transaction writes.
func (tx *Tx) Store() store.Store { return tx.st }

// DryRun reports whether the transaction writes nothing.
func (tx *Tx) DryRun() bool { return tx.b.DryRun() }

// Apply writes the plans that change something in one backup run (so
// `sessfix undo RUN` reverts it) and verifies every written session from
// disk. It returns the run id, set on failure too when something was
// written, so it can be undone. A dry run writes nothing and returns "".
// Nothing is begun once ctx has ended; once writing has begun it is not
// interrupted: a change set is either applied whole or not at all.
func (tx *Tx) Apply(ctx context.Context, plans []Outcome) (run string, err error) {
	if tx.DryRun() || !slices.ContainsFunc(plans, Outcome.Changes) {
		return "", nil
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return tx.apply(ctx, plans)
}

// apply is Apply once the caller decided to write: the change sets of
// plans go through the backup transaction (or the WriteOptions.Apply
// seam), uninterrupted, and are read back.
func (tx *Tx) apply(ctx context.Context, plans []Outcome) (string, error) {
	if tx.DryRun() {
		return "", nil
	}
	var sets []*store.ChangeSet
	for _, p := range plans {
		if p.Changes() {
			sets = append(sets, p.Plan.Changes)
		}
	}
	ctx2 := context.WithoutCancel(ctx)
	var run string
	var err error
	if tx.opts.Apply != nil && tx.b.Held() {
		run, err = tx.opts.Apply(ctx2, tx.b.Target(sets), sets)
	} else {
		run, err = tx.b.Apply(ctx2, sets)
	}
	return verify(ctx, tx.st, plans, tx.opts, run, err)
}

// Close ends the transaction, releasing the writer lock of a writing one.
// Closing twice is harmless.
func (tx *Tx) Close() error {
	if tx == nil {
		return nil
	}
	return tx.b.Close()
}
