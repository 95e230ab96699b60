package fix

import (
	"context"
	"errors"
	"fmt"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/plandoc"
	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
)

// lock takes the writer lock of every store, in order, before anything is
// planned, and returns the stores to plan. A store another sessfix holds
// ends the run (exit 4) with the locks taken so far released. A lock that
// cannot be created for another reason (a read-only store) is not taken:
// the store is planned as usual, and writing it fails the way it always
// would. Taking a lock rolls back what a killed sessfix left half-written
// in the store (backup.Lock), said on stderr; a store where that fails is
// not planned, and makes the run fail in the end.
func (r *fixRun) lock(ctx context.Context, stores []store.Store) ([]store.Store, error) {
	r.txs = map[store.Store]*fix.Tx{}
	var out []store.Store
	for _, st := range stores {
		pipe := *r.pipe
		pipe.Write.Rollbacks = func(rbs []backup.Rollback) { cli.SayRollbacks(r.opts.Factory.IOStreams, rbs) }
		tx, err := pipe.Begin(ctx, st, false)
		switch {
		case errors.Is(err, store.ErrLocked):
			if uerr := r.unlock(); uerr != nil {
				err = errors.Join(err, uerr)
			}
			// The error names the store, who holds it and what to do.
			return nil, err
		case err == nil:
			r.txs[st] = tx
		case errors.As(err, new(*backup.RecoverError)):
			r.storeErrs[st.Info().Path] = err
			continue
		}
		out = append(out, st)
	}
	return out, nil
}

// infos are the stores' Info.
func infos(stores []store.Store) []store.Info {
	out := make([]store.Info, len(stores))
	for i, st := range stores {
		out[i] = st.Info()
	}
	return out
}

// refuseReadOnly returns the stores fix may write. A store sessfix never
// writes (an OpenCode 2 database) is not planned at all, dry run or not:
// a plan would promise a repair the writer then refuses. Its refusal, with
// what to do instead, makes the run fail (exit 3) once the others are done.
func (r *fixRun) refuseReadOnly(stores []store.Store) []store.Store {
	var out []store.Store
	for _, st := range stores {
		if err := shapes.CheckWritable(st.Info()); err != nil {
			r.storeErrs[st.Info().Path] = err
			continue
		}
		out = append(out, st)
	}
	return out
}

// unlock releases the locks lock took.
func (r *fixRun) unlock() error {
	var errs []error
	for st, tx := range r.txs {
		if err := tx.Close(); err != nil {
			errs = append(errs, err)
		}
		delete(r.txs, st)
	}
	return errors.Join(errs...)
}

// confirm decides whether to write (cli.ConfirmWrite).
func (r *fixRun) confirm(ctx context.Context, changing, edits int) error {
	what := fmt.Sprintf("%s to %s", plural.Count(edits, "edit", "edits"), plural.Count(changing, "session", "sessions"))
	return cli.ConfirmWrite(ctx, r.opts.Factory.IOStreams, r.opts.Factory.Prompt(), r.mode, what)
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
	var runs []string
	var written []fix.Outcome
	for _, st := range stores {
		if err := ctx.Err(); err != nil {
			return err // interrupted: the stores not yet begun stay as they are
		}
		apply := r.pipe.Apply
		if tx := r.txs[st]; tx != nil {
			apply = func(ctx context.Context, _ store.Store, plans []fix.Outcome) (string, error) {
				return tx.Apply(ctx, plans)
			}
		}
		path := st.Info().Path
		run, err := apply(ctx, st, byStore[st])
		if run != "" {
			r.runs[path] = run
		}
		if err != nil {
			var partial *backup.ApplyError
			if run != "" && !errors.As(err, &partial) {
				// All was written, but a session did not verify.
				err = cli.WithHints(err, "undo the run with `sessfix undo "+run+"` and report the session: its repair did not verify")
			}
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
	for _, run := range runs {
		ios.Statusf("backup run %s; undo with: sessfix undo %s", run, run)
	}
	return r.left()
}
