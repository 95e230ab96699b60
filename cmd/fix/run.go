package fix

import (
	"context"
	"fmt"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/write"
	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

// RunFix does the work of `sessfix fix`: plan every session through the
// repair pipeline, show the plans or their diff, ask, then write each
// store's plans in one backup run. A run that may write takes the stores'
// writer locks before it plans and holds them until it has written: the
// plans it shows and writes are never older than another sessfix's writes.
func RunFix(ctx context.Context, opts *FixOptions) (err error) {
	if opts.Error != "" && len(opts.Sessions) == 0 {
		return needsSession(ctx, opts)
	}
	pipe, fails, err := newPipeline(opts)
	if err != nil {
		return err
	}
	f := opts.Factory
	cli.BatchGC()
	disc, err := f.OpenStores("fix", opts.Paths)
	if err != nil {
		return noInputs(f, fails, err)
	}
	defer disc.Close()
	read := cli.ReadPaths(opts.Paths, disc)
	if opts.Sessions, err = cli.ResolveSessions(ctx, disc.Stores, opts.Sessions, read); err != nil {
		return err
	}
	pipe.Sessions, pipe.Scan.Sessions = opts.Sessions, opts.Sessions
	// The settle policy sees the stores: whether another program has one
	// open is evidence that a session is being written.
	pipe.Scan.Activity = opts.Activity
	if pipe.Scan.Activity == nil {
		pipe.Scan.Activity = opencode.StoreActivity(disc.Stores)
	}
	pipe.SkipInUse = true
	run := &fixRun{opts: opts, pipe: pipe, fails: fails, paths: read, storeErrs: map[string]error{}, runs: map[string]string{}, applied: map[string]bool{}, dbErrs: map[string]error{}}
	for _, st := range disc.Stores {
		run.stores = append(run.stores, st.Info())
	}
	for _, in := range disc.Failed {
		run.stores = append(run.stores, store.Info{Path: in.Path})
		run.storeErrs[in.Path] = in.Err
	}
	run.flow = write.New(f, pipe, write.Options{DryRun: opts.DryRun, Yes: opts.Yes, Diff: opts.Diff, UndoHint: undoHint})
	writable, err := run.begin(ctx, disc.Stores)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := run.flow.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if writable, err = run.planDatabases(ctx, writable); err != nil {
		return err
	}
	if len(writable) > 0 {
		if err := run.plan(ctx, writable); err != nil {
			return err
		}
	}
	defer func() { err = run.finish(err, cli.InputsFailed("fix", disc)) }()
	if err := run.flow.Show(run.plans); err != nil {
		return err
	}
	if err := run.showDatabases(); err != nil {
		return err
	}
	changing, edits := run.size()
	if changing == 0 && len(run.dbs) == 0 {
		if len(writable) == 0 {
			return nil // every store is read only: its error says so
		}
		run.flow.Nothing(run.busy)
		return run.left()
	}
	what := fmt.Sprintf("%s to %s", plural.Count(edits, "edit", "edits"), plural.Count(changing, "session", "sessions"))
	if db := run.databaseWhat(); db != "" && changing == 0 {
		what = db
	} else if db != "" {
		what = db + " and " + what
	}
	if err := run.flow.Confirm(ctx, what); err != nil {
		return err
	}
	return run.apply(ctx)
}

// newPipeline checks the options and builds the repair pipeline and the
// failure policy for the findings fix leaves.
func newPipeline(opts *FixOptions) (*fix.Pipeline, cli.FailPolicy, error) {
	var none cli.FailPolicy
	fopts, err := cli.RepairOptions(opts.Strategies, opts.Placeholder)
	if err != nil {
		return nil, none, err
	}
	if opts.Diff && !opts.DryRun {
		return nil, none, cli.RerunWith(cli.FlagErrorf("--diff needs --dry-run"), "--dry-run")
	}
	if opts.Diff && opts.Factory.Format() != "text" {
		return nil, none, cli.WithHints(cli.FlagErrorf("--diff prints a unified diff, not %s", opts.Factory.Format()),
			"drop --diff for the plan as JSON, whose edits name every record that would change")
	}
	if opts.Error != "" && len(opts.Sessions) > 1 {
		var hints []string
		for _, id := range opts.Sessions {
			hints = append(hints, "run: "+cli.CommandLine(append([]string{"fix", "--session", id, "--error", opts.Error}, opts.Paths...)...))
		}
		return nil, none, cli.WithHints(errNeedsSession, hints...)
	}
	sopts, fails, err := (&cli.Filters{Select: opts.Select, Ignore: opts.Ignore, FailOn: opts.FailOn}).ScanFilters()
	if err != nil {
		return nil, none, err
	}
	if err := cli.SetSettle(sopts, opts.Settle, opts.Abandon); err != nil {
		return nil, none, err
	}
	now := opts.Factory.Clock()
	sopts.Sessions, sopts.Now = opts.Sessions, now
	sopts.OpenCode = opts.Factory.OpenCode()
	fopts.Now, fopts.Scan = now, sopts
	pipe := &fix.Pipeline{
		Scan:     sopts,
		Fix:      fopts,
		Sessions: opts.Sessions,
		Error:    opts.Error,
		Force:    opts.Force,
		// One fix is one operation: undo --last reverts every run it writes.
		Write: fix.WriteOptions{Backup: backup.Options{Now: now, Operation: backup.NewOperationID(now())}, Apply: opts.Apply},
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
	fails cli.FailPolicy
	// flow decides whether to write, holds a write transaction per store
	// from before planning to the end, shows, asks and writes.
	flow *write.Flow
	// paths are the inputs named that could be opened, for hints.
	paths []string
	// plans are the sessions to show: a change, findings left, or notes.
	plans []fix.Outcome
	// unfixed counts findings left that fail the run; busy the sessions
	// skipped as possibly in use.
	unfixed, busy int

	// stores are the stores read, then the inputs that could not be
	// opened; storeErrs and runs are by store path: why a store could not
	// be listed or written, and the backup run of what was written to it.
	stores    []store.Info
	storeErrs map[string]error
	runs      map[string]string
	applied   map[string]bool
	// outcomes are every session's outcome but the clean ones, for
	// --format json; written is set once apply has begun.
	outcomes []fix.Outcome
	written  bool
	// dbs are the database repairs planned (database.go), of dbStores;
	// dbErrs their failures by store path.
	dbs      []*fix.DatabaseRepair
	dbStores []store.Store
	dbErrs   map[string]error
	// damaged is set when a --session run left out a damaged database.
	damaged bool
}

// plan runs every session of the stores through the pipeline, store by
// store, printing what the user must know on stderr.
func (r *fixRun) plan(ctx context.Context, stores []store.Store) error {
	ios := r.opts.Factory.IOStreams
	found := map[string]bool{}
	for _, st := range stores {
		targets, err := r.pipe.Targets(ctx, st)
		if err != nil {
			// Fix what can be fixed in the other stores; this one makes
			// the run fail in the end.
			r.storeErrs[st.Info().Path] = err
			continue
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
	if r.damaged {
		// The session may be in the damaged database: its refusal says
		// more than "not found".
		return nil
	}
	return cli.CheckSessionsFound(r.opts.Sessions, found, r.paths)
}

// take counts one session's outcome and says on stderr what the user must
// know about it.
func (r *fixRun) take(o fix.Outcome) error {
	ios := r.opts.Factory.IOStreams
	path := o.Store.Info().Path
	r.outcomes = append(r.outcomes, o)
	switch o.Status {
	case fix.Failed:
		if o.Step == fix.StepPlan {
			return fmt.Errorf("session %s in %s: %w", o.ID, path, o.Err)
		}
		ios.Statusf("warning: session %s in %s cannot be loaded, skipped: %v", o.ID, path, o.Err)
		r.unfixed++
		return nil
	case fix.SkippedBusy:
		ios.Statusf("skipped session %s: %s, so OpenCode may still be writing it (wait, or add --force)", o.ID, o.Use.Why)
		r.busy++
		if !r.flow.Mode().Writes() {
			r.plans = append(r.plans, o) // shown, marked as skipped
		}
	case fix.Planned:
		if o.Forced {
			r.flow.Forced(o, "fixing it")
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

// remaining counts what the run leaves to the user: findings left that
// fail it. A session held back because OpenCode may be writing it is named
// on stderr and counted in skipped_busy, but does not fail the run: fix
// did everything it may do now, as before sessfix showed such sessions'
// plans (TestLiveTurnLeftAlone); a dry run still exits 1 on the plan it
// shows.
func (r *fixRun) remaining() int {
	if !r.flow.Mode().Writes() {
		return r.unfixed + r.busy
	}
	return r.unfixed
}

// left is cli.ErrFindings when the run leaves something to the user, else
// nil.
func (r *fixRun) left() error {
	if r.remaining() > 0 {
		return cli.ErrFindings
	}
	return nil
}

// size counts the sessions the plans change and their edits.
func (r *fixRun) size() (sessions, edits int) {
	for _, o := range r.plans {
		if o.Status == fix.Planned && o.Changes() {
			sessions++
			edits += len(o.Plan.Changes.Edits)
		}
	}
	return sessions, edits
}
