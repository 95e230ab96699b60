package write

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
)

// Options are what a command tells the flow.
type Options struct {
	// DryRun, Yes and Diff are the command's --dry-run, --yes and --diff.
	DryRun, Yes, Diff bool
	// UndoHint is the hint on a write that failed after it wrote something
	// (a backup run to undo), in the command's words; "" gives none.
	// partial is a change set that failed in the middle of the run
	// (*backup.ApplyError), whose own hint names the sessions written
	// before it.
	UndoHint func(run string, partial bool) string
}

// Flow is one run of a command that writes: the write mode, a transaction
// per store begun, and the output the plans go to.
type Flow struct {
	f    *cli.Factory
	pipe *fix.Pipeline
	opts Options
	mode cli.WriteMode
	txs  map[store.Store]*fix.Tx
	out  *cli.Output
}

// New decides whether the run may write (cli.DecideWrite, asking the
// Factory's Prompter whether it can ask) and returns the flow that plans
// and writes through pipe. What beginning a transaction rolls back, or in
// a dry run would, is said on stderr.
func New(f *cli.Factory, pipe *fix.Pipeline, opts Options) *Flow {
	ios := f.IOStreams
	pipe.Write.Rollbacks = func(rbs []backup.Rollback) { cli.SayRollbacks(ios, rbs) }
	// A journal a dry run cannot read stops the run that writes: say so now.
	pipe.Write.Warn = func(err error) { fmt.Fprintf(ios.ErrOut, "warning: %v\n", err) }
	return &Flow{f: f, pipe: pipe, opts: opts, mode: cli.DecideWrite(f.Prompt(), opts.DryRun, opts.Yes), txs: map[store.Store]*fix.Tx{}}
}

// Mode is how the run decided to write.
func (fl *Flow) Mode() cli.WriteMode { return fl.mode }

// Begin opens the write transaction of st before it is planned: with the
// writer lock when the run may write, else a dry one (fix.Begin). Its
// error (a store sessfix never writes, a lock another sessfix holds, a
// roll-back that failed, a lock that cannot be created) is the command's
// to judge; a store without a transaction is written, if at all, in one of
// its own (Apply).
func (fl *Flow) Begin(ctx context.Context, st store.Store) error {
	tx, err := fl.pipe.Begin(ctx, st, !fl.mode.Writes())
	if err != nil {
		return err
	}
	fl.txs[st] = tx
	return nil
}

// Tx is the transaction Begin opened on st, nil when none.
func (fl *Flow) Tx(st store.Store) *fix.Tx { return fl.txs[st] }

// Close ends every transaction, releasing the writer locks, and closes
// the output if it is still open.
func (fl *Flow) Close() error {
	errs := []error{fl.CloseOutput()}
	for st, tx := range fl.txs {
		if err := tx.Close(); err != nil {
			errs = append(errs, err)
		}
		delete(fl.txs, st)
	}
	return errors.Join(errs...)
}

// Output opens stdout or the --output file, once.
func (fl *Flow) Output() (*cli.Output, error) {
	if fl.out == nil {
		out, err := fl.f.OpenOutput()
		if err != nil {
			return nil, err
		}
		fl.out = out
	}
	return fl.out, nil
}

// CloseOutput closes the output, if it is open.
func (fl *Flow) CloseOutput() error {
	if fl.out == nil {
		return nil
	}
	out := fl.out
	fl.out = nil
	return out.Close()
}

// Show prints the plans on stdout (or --output) before anything is
// written: with --diff, the diff there and the plans on stderr. With
// --format json the command's document comes at the end; the plans go to
// stderr when the user is asked, so the question is never blind.
func (fl *Flow) Show(plans []fix.Outcome) error {
	ios := fl.f.IOStreams
	if fl.f.Format() == "json" {
		if fl.mode == cli.WriteAsk {
			_ = plandoc.WritePlans(ios.ErrOut, plans, ios.ColorEnabled())
		}
		return nil
	}
	out, err := fl.Output()
	if err != nil {
		return err
	}
	if fl.opts.Diff {
		if err := plandoc.WriteDiffs(out.W, plans, out.Color); err != nil {
			return fmt.Errorf("cannot write the diff: %w", err)
		}
		_ = plandoc.WritePlans(ios.ErrOut, plans, false)
		return nil
	}
	if err := plandoc.WritePlans(out.W, plans, out.Color); err != nil {
		return fmt.Errorf("cannot write the plan: %w", err)
	}
	return nil
}

// Confirm decides whether to write what ("3 edits to 1 session"): never
// in a dry run or without a terminal, always with --yes, else as the user
// answers (cli.ConfirmWrite).
func (fl *Flow) Confirm(ctx context.Context, what string) error {
	return cli.ConfirmWrite(ctx, fl.f.IOStreams, fl.f.Prompt(), fl.mode, what)
}

// Apply writes one store's plans in one backup run and reads them back,
// in the store's transaction (or, for a store Begin could not lock, in a
// transaction of its own, which fails as the lock did). It returns the
// run (set on failure too when something was written) and the error, with
// the command's hint on how to undo a run written but failed.
func (fl *Flow) Apply(ctx context.Context, st store.Store, plans []fix.Outcome) (string, error) {
	var run string
	var err error
	if tx := fl.txs[st]; tx != nil {
		run, err = tx.Apply(ctx, plans)
	} else {
		run, err = fl.pipe.Apply(ctx, st, plans)
	}
	if err != nil && run != "" {
		err = fl.Failed(err, run)
	}
	return run, err
}

// Failed adds the command's undo hint to the failure of a step that
// follows a written run (a read-back).
func (fl *Flow) Failed(err error, run string) error {
	if fl.opts.UndoHint == nil {
		return err
	}
	var partial *backup.ApplyError
	if hint := fl.opts.UndoHint(run, errors.As(err, &partial)); hint != "" {
		return cli.WithHints(err, hint)
	}
	return err
}

// Nothing says on stderr that the run has nothing to write; busy counts
// the sessions skipped above because OpenCode may still be writing them.
func (fl *Flow) Nothing(busy int) {
	if busy > 0 {
		fl.f.IOStreams.Statusf("nothing to change but the %s skipped above", plural.Count(busy, "session", "sessions"))
		return
	}
	fl.f.IOStreams.Statusf("nothing to change")
}

// Forced warns on stderr that o's session may still be in use and is
// written anyway because of --force; doing is what the command does, in
// its words ("fixing it", "writing").
func (fl *Flow) Forced(o fix.Outcome, doing string) {
	fl.f.IOStreams.Statusf("WARNING: session %s may still be in use (%s); %s anyway because of --force", o.ID, o.Use.Why, doing)
}

// Undo says on stderr how to undo each backup run written.
func (fl *Flow) Undo(runs ...string) {
	for _, run := range runs {
		fl.f.IOStreams.Statusf("backup run %s; undo with: sessfix undo %s", run, run)
	}
}
