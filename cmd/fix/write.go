package fix

import (
	"context"
	"errors"
	"fmt"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/report"
	"github.com/sessfix/sessfix/pkg/store"
)

// writeMode is how a run of fix decides to write.
type writeMode int

const (
	writeDry        writeMode = iota // --dry-run: never
	writeNoTerminal                  // no --yes and no terminal to ask on: never
	writeAsk                         // ask on the terminal
	writeYes                         // --yes: always
)

// writeMode decides, before planning, whether the run may write.
func (r *fixRun) writeMode() writeMode {
	opts, ios := r.opts, r.opts.Factory.IOStreams
	switch {
	case opts.DryRun:
		return writeDry
	case opts.Yes:
		return writeYes
	}
	interactive := opts.Interactive
	if interactive == nil {
		interactive = func() bool { return cli.IsTTY(ios.In) && ios.IsStdoutTTY() }
	}
	if interactive() {
		return writeAsk
	}
	return writeNoTerminal
}

// lock takes the writer lock of every store, in order, before anything is
// planned. A store another sessfix holds ends the run (exit 4) with the
// locks taken so far released. A lock that cannot be created for another
// reason (a read-only store) is not taken: the store is planned as usual,
// and writing it fails the way it always would.
func (r *fixRun) lock(stores []store.Store) error {
	r.locks = map[store.Store]*store.Lock{}
	for _, st := range stores {
		l, err := store.AcquireLock(st.Info())
		switch {
		case errors.Is(err, store.ErrLocked):
			if uerr := r.unlock(); uerr != nil {
				err = errors.Join(err, uerr)
			}
			// The error names the store, who holds it and what to do.
			return err
		case err == nil:
			r.locks[st] = l
		}
	}
	return nil
}

// unlock releases the locks lock took.
func (r *fixRun) unlock() error {
	var errs []error
	for st, l := range r.locks {
		if err := l.Release(); err != nil {
			errs = append(errs, err)
		}
		delete(r.locks, st)
	}
	return errors.Join(errs...)
}

// confirm decides whether to write: --dry-run never does, --yes always
// does, otherwise the user is asked on a terminal. It returns
// cli.ErrFindings when nothing is to be written.
func (r *fixRun) confirm(changing, edits int) error {
	opts, ios := r.opts, r.opts.Factory.IOStreams
	what := fmt.Sprintf("%s to %s", plural.Count(edits, "edit", "edits"), plural.Count(changing, "session", "sessions"))
	switch r.mode {
	case writeYes:
		return nil
	case writeAsk:
		confirm := opts.Confirm
		if confirm == nil {
			confirm = func(q string) (bool, error) { return cli.AskLine(ios.In, ios.ErrOut, q) }
		}
		ok, err := confirm("write " + what + "?")
		if err != nil {
			return err
		}
		if !ok {
			ios.Statusf("nothing written")
			return cli.ErrFindings
		}
		return nil
	case writeNoTerminal:
		// Said even with -q: it is why nothing was written.
		return cli.FindingsErrorf("not written: no terminal to ask on; add --yes to write the %s", what)
	}
	ios.Statusf("dry run: %s in %s would be written", plural.Count(edits, "edit", "edits"), plural.Count(changing, "session", "sessions"))
	return cli.ErrFindings
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
		if r.locks[st] != nil {
			apply = r.pipe.ApplyLocked
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
		ios.Statusf("%s", report.FixSummary(written))
	}
	for _, run := range runs {
		ios.Statusf("backup run %s; undo with: sessfix undo %s", run, run)
	}
	return r.left()
}
