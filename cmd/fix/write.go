package fix

import (
	"context"
	"errors"

	"github.com/sessfix/sessfix/cmd/internal/plandoc"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/store"
)

// begin opens a write transaction on every store, in order, before
// anything is planned, and returns the stores to plan. A store sessfix
// never writes (an OpenCode 2 database) is not planned at all, dry run or
// not: a plan would promise a repair the writer then refuses; its refusal,
// with what to do instead, makes the run fail (exit 3) once the others are
// done. A store another sessfix holds ends the run (exit 4) with the
// transactions begun so far ended. A lock that cannot be created for
// another reason (a read-only store) is not taken: the store is planned as
// usual, and writing it fails the way it always would. Taking a lock rolls
// back what a killed sessfix left half-written in the store (backup.Lock),
// said on stderr; a store where that fails is not planned, and makes the
// run fail in the end.
func (r *fixRun) begin(ctx context.Context, stores []store.Store) ([]store.Store, error) {
	var out []store.Store
	for _, st := range stores {
		err := r.flow.Begin(ctx, st)
		switch {
		case errors.Is(err, store.ErrLocked):
			if cerr := r.flow.Close(); cerr != nil {
				err = errors.Join(err, cerr)
			}
			// The error names the store, who holds it and what to do.
			return nil, r.refuse(st.Info().Path, err)
		case errors.As(err, new(*store.ReadOnlyError)), errors.As(err, new(*backup.RecoverError)):
			r.storeErrs[st.Info().Path] = err
			continue
		}
		out = append(out, st)
	}
	return out, nil
}

// undoHint is fix's hint on a store written whose read-back failed; a
// change set that failed in the middle of the run has its own.
func undoHint(run string, partial bool) string {
	if partial {
		return ""
	}
	return "undo the run with `sessfix undo " + run + "` and report the session: its repair did not verify"
}

// apply writes each store's plans in one backup run, under its writer
// lock, and verifies every written session from disk. A store that cannot
// be written does not stop the others: its error is kept for finish, which
// makes the run fail once every store was tried.
func (r *fixRun) apply(ctx context.Context) error {
	ios := r.opts.Factory.IOStreams
	var stores []store.Store
	byStore := map[store.Store][]fix.Outcome{}
	for _, o := range r.plans {
		if o.Status != fix.Planned || !o.Changes() {
			continue
		}
		if _, ok := byStore[o.Store]; !ok {
			stores = append(stores, o.Store)
		}
		byStore[o.Store] = append(byStore[o.Store], o)
	}
	r.written = true
	runs, err := r.applyDatabases(ctx)
	if err != nil {
		return err
	}
	var written []fix.Outcome
	for _, st := range stores {
		if err := ctx.Err(); err != nil {
			return err // interrupted: the stores not yet begun stay as they are
		}
		path := st.Info().Path
		run, err := r.flow.Apply(ctx, st, byStore[st])
		if run != "" {
			r.runs[path] = run
		}
		if err != nil {
			r.storeErrs[path] = err
			continue
		}
		if run != "" {
			runs = append(runs, run)
		}
		r.applied[path] = true
		written = append(written, byStore[st]...)
	}
	if len(written) > 0 {
		ios.Statusf("%s", plandoc.FixSummary(written))
	}
	r.flow.Undo(runs...)
	return r.left()
}
