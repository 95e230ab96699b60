package fix

import (
	"context"
	"fmt"
	"time"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/report"
	"github.com/sessfix/sessfix/pkg/store"
)

// RunFix does the work of `sessfix fix`: plan every session through the
// repair pipeline, show the plans or their diff, ask, then write each
// store's plans in one backup run. A run that may write takes the stores'
// writer locks before it plans and holds them until it has written: the
// plans it shows and writes are never older than another sessfix's writes.
func RunFix(ctx context.Context, opts *FixOptions) (err error) {
	pipe, fails, err := newPipeline(opts)
	if err != nil {
		return err
	}
	f := opts.Factory
	ios := f.IOStreams
	cli.BatchGC()
	disc, err := f.OpenStores("fix", opts.Paths)
	if err != nil {
		return err
	}
	defer disc.Close()
	run := &fixRun{opts: opts, pipe: pipe, fails: fails}
	run.mode = run.writeMode()
	if run.mode == writeAsk || run.mode == writeYes {
		if err := run.lock(disc.Stores); err != nil {
			return err
		}
		defer func() {
			if rerr := run.unlock(); rerr != nil && err == nil {
				err = rerr
			}
		}()
	}
	if err := run.plan(ctx, disc.Stores); err != nil {
		return err
	}
	if err := run.show(); err != nil {
		return err
	}
	changing, edits := run.size()
	if changing == 0 {
		ios.Statusf("nothing to change")
		if run.remaining() > 0 {
			return cli.ErrFindings
		}
		return nil
	}
	if err := run.confirm(changing, edits); err != nil {
		return err
	}
	return run.apply(ctx)
}

// newPipeline checks the options and builds the repair pipeline and the
// failure policy for the findings fix leaves.
func newPipeline(opts *FixOptions) (*fix.Pipeline, report.FailPolicy, error) {
	var none report.FailPolicy
	fopts, err := cli.RepairOptions(opts.Strategies, opts.Placeholder)
	if err != nil {
		return nil, none, err
	}
	if opts.Settle < 0 {
		return nil, none, cli.FlagErrorf("invalid --settle %s: must not be negative", opts.Settle)
	}
	if opts.Diff && !opts.DryRun {
		return nil, none, cli.WithHints(cli.FlagErrorf("--diff needs --dry-run"), "sessfix fix --dry-run --diff")
	}
	if opts.Error != "" && len(opts.Sessions) != 1 {
		return nil, none, cli.WithHints(cli.FlagErrorf("--error needs exactly one --session: the error's messages.N only means something in the session it came from"),
			"find the session with `sessfix scan`, then: sessfix fix --session ID --error TEXT")
	}
	sopts, fails, err := (&cli.Filters{Select: opts.Select, Ignore: opts.Ignore, FailOn: opts.FailOn}).ScanFilters()
	if err != nil {
		return nil, none, err
	}
	now := opts.Factory.Now
	if now == nil {
		now = time.Now
	}
	sopts.Sessions, sopts.Settle, sopts.Now = opts.Sessions, opts.Settle, now
	fopts.Now, fopts.Scan = now, sopts
	settle := sopts.Policy()
	pipe := &fix.Pipeline{
		Scan:     sopts,
		Fix:      fopts,
		Sessions: opts.Sessions,
		Error:    opts.Error,
		Settle:   &settle,
		Force:    opts.Force,
		Write:    fix.WriteOptions{Backup: backup.Options{Now: opts.Factory.Now}, Apply: opts.Apply},
	}
	if opts.Config != nil {
		pipe.Suppressed = opts.Config.Suppressed
	}
	return pipe, fails, nil
}

// fixRun is one run of `sessfix fix` between planning and writing.
type fixRun struct {
	opts  *FixOptions
	pipe  *fix.Pipeline
	fails report.FailPolicy
	mode  writeMode
	// locks are the writer locks taken before planning, by store.
	locks map[store.Store]*store.Lock
	// plans are the sessions to show: a change, findings left, or notes.
	plans []fix.Outcome
	// unfixed counts findings left that fail the run; busy the sessions
	// skipped as possibly in use.
	unfixed, busy int
}

// plan runs every session of the stores through the pipeline, store by
// store, printing what the user must know on stderr.
func (r *fixRun) plan(ctx context.Context, stores []store.Store) error {
	ios := r.opts.Factory.IOStreams
	found := map[string]bool{}
	for _, st := range stores {
		targets, err := r.pipe.Targets(ctx, st)
		if err != nil {
			return err
		}
		for _, t := range targets {
			found[t.Ref.ID] = true
		}
		var outcomes []fix.Outcome
		prog := ios.StartProgress("planning", "sessions")
		r.pipe.Progress = prog.Update
		err = r.pipe.Plan(ctx, targets, func(o fix.Outcome) bool {
			if o.Status != fix.Clean {
				outcomes = append(outcomes, o)
			}
			return o.Status != fix.Failed || o.Step != fix.StepPlan
		})
		prog.Stop()
		for _, o := range outcomes {
			if err := r.take(o); err != nil {
				return err
			}
		}
		if err != nil {
			return err
		}
	}
	return cli.CheckSessionsFound(r.opts.Sessions, found)
}

// take counts one session's outcome and says on stderr what the user must
// know about it.
func (r *fixRun) take(o fix.Outcome) error {
	ios := r.opts.Factory.IOStreams
	path := o.Store.Info().Path
	switch o.Status {
	case fix.Failed:
		if o.Step == fix.StepPlan {
			return fmt.Errorf("session %s in %s: %w", o.ID, path, o.Err)
		}
		ios.Statusf("warning: session %s in %s cannot be loaded, skipped: %v", o.ID, path, o.Err)
		r.unfixed++
		return nil
	case fix.SkippedBusy:
		ios.Statusf("skipped session %s: it changed %s and may still be in use (wait, or add --force)", o.ID, when(o.Age))
		r.busy++
	case fix.Planned:
		if o.Forced {
			ios.Statusf("WARNING: session %s changed %s and may still be in use; fixing it anyway because of --force", o.ID, when(o.Age))
		}
		r.plans = append(r.plans, o)
	}
	for _, u := range o.Plan.Unfixed {
		if r.fails.Fails(u.Finding) {
			r.unfixed++
		}
	}
	return nil
}

// when says how long ago a session changed.
func when(age time.Duration) string {
	if age < 0 {
		return "after the current time"
	}
	return age.Round(time.Second).String() + " ago"
}

// remaining counts what the run leaves to the user: findings left that
// fail it, and sessions skipped as busy.
func (r *fixRun) remaining() int { return r.unfixed + r.busy }

// size counts the sessions the plans change and their edits.
func (r *fixRun) size() (sessions, edits int) {
	for _, o := range r.plans {
		if o.Changes() {
			sessions++
			edits += len(o.Plan.Changes.Edits)
		}
	}
	return sessions, edits
}

// show prints the plans, or with --diff the diff on stdout and the plans
// on stderr.
func (r *fixRun) show() error {
	ios := r.opts.Factory.IOStreams
	if r.opts.Diff {
		if err := report.WriteDiffs(ios.Out, r.plans, ios.ColorEnabled()); err != nil {
			return err
		}
		_ = report.WritePlans(ios.ErrOut, r.plans, false)
		return nil
	}
	return report.WritePlans(ios.Out, r.plans, ios.ColorEnabled())
}
