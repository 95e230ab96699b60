// Package cut runs a session cut of `sessfix drop` and `sessfix rewind`,
// and the copy of `sessfix fork`, through the repair pipeline (pkg/fix): the writer lock taken before the
// plan, the settle policy's busy check, the plan or its diff, the question
// on a terminal (--yes, --dry-run), one backup run, the atomic write and the
// read-back. The planners are pkg/surgery's.
package cut

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/plandoc"
	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/surgery"
)

// Options are the inputs every cut command shares.
type Options struct {
	Factory *cli.Factory
	// Verb is the command's name ("drop").
	Verb string
	// Session is the session id, or a prefix naming one session.
	Session string
	// Command is the command's words, arguments and flags but --store
	// (drop ses_1 msg_2), which a hint naming a store repeats; nil means
	// Verb and Session.
	Command []string
	// Paths are the stores named with --store; empty means discover.
	Paths []string

	DryRun, Diff, Yes, Force bool
	// Settle and Abandon are the settle policy's windows.
	Settle, Abandon time.Duration

	// Apply replaces backup.Apply (tests; fork, whose export file is a
	// new store).
	Apply func(ctx context.Context, info store.Info, sets []*store.ChangeSet) (string, error)
	// Written, when set, follows a written change set (run is its backup
	// run): fork reads its new session back and says how to open it.
	Written func(ctx context.Context, o fix.Outcome, run string) error
}

// AddFlags adds the flags every cut command shares.
func AddFlags(cmd *cobra.Command, opts *Options) {
	fl := cmd.Flags()
	fl.BoolVarP(&opts.DryRun, "dry-run", "n", false, "plan and print, write nothing")
	fl.BoolVar(&opts.Diff, "diff", false, "print a unified diff of every record that would change (with --dry-run)")
	fl.BoolVarP(&opts.Yes, "yes", "y", false, "write without asking")
	fl.BoolVar(&opts.Force, "force", false, "write even if OpenCode may still be writing the session (see --settle and --abandon)")
	cli.AddSettleFlags(cmd, &opts.Settle, &opts.Abandon)
	cli.AddStoreFlag(cmd, &opts.Paths)
}

// ExitCodes is the exit code section of a cut command's help.
const ExitCodes = `Exit codes:
  0    written, or nothing to change
  1    a dry run printed the plan, or it was not written (the question was declined, no terminal to ask on)
  2    usage error, a prefix that names several sessions or messages, or a session found in several stores
  3    no store found, or a --store path cannot be read; the session is not in the stores; the change was
       refused (it would leave a session broken)
  4    the store is locked, or OpenCode may still be writing the session (docs/fixing.md, "Sessions in use")
  129  stopped by SIGHUP
  130  interrupted (Ctrl-C)
  143  stopped by SIGTERM`

// Run plans the cut with planner on the session opts names and writes it.
func Run(ctx context.Context, opts *Options, planner func(*store.Session, *scan.Options) (*fix.SessionPlan, error)) (err error) {
	f := opts.Factory
	ios := f.IOStreams
	sopts := &scan.Options{}
	if err := cli.SetSettle(sopts, opts.Settle, opts.Abandon); err != nil {
		return err
	}
	if opts.Diff && !opts.DryRun {
		return cli.WithHints(cli.FlagErrorf("--diff needs --dry-run"), "sessfix "+opts.Verb+" --dry-run --diff ...")
	}
	if opts.Diff && f.Format() == "json" {
		return cli.WithHints(cli.FlagErrorf("--diff prints a unified diff, not json"), "with --format json, the document's edits name every record")
	}
	command := opts.Command
	if command == nil {
		command = []string{opts.Verb, opts.Session}
	}
	verb := cli.Verb(command...)
	disc, err := f.OpenStores(verb, opts.Paths)
	if err != nil {
		return err
	}
	defer disc.Close()
	if err := cli.InputsFailed(verb, disc); err != nil {
		return err
	}
	found, err := surgery.Find(ctx, disc.Stores, opts.Session)
	if err != nil {
		return cli.SessionError(err, verb, opts.Paths)
	}
	now := f.Clock()
	sopts.Now, sopts.Activity = now, scan.StoreActivity(disc.Stores)
	pipe := &fix.Pipeline{
		Scan:      sopts,
		Fix:       fix.Options{Now: now, Scan: sopts},
		SkipInUse: true,
		Force:     opts.Force,
		Workers:   1,
		Planner:   func(s *store.Session) (*fix.SessionPlan, error) { return planner(s, sopts) },
		Write:     fix.WriteOptions{Backup: backup.Options{Now: now}, Apply: opts.Apply},
	}
	mode := cli.DecideWrite(f.Prompt(), opts.DryRun, opts.Yes)
	var tx *fix.Tx
	if mode.Writes() {
		pipe.Write.Rollbacks = func(rbs []backup.Rollback) { cli.SayRollbacks(ios, rbs) }
		if tx, err = pipe.Begin(ctx, found.Store, false); err != nil {
			return err
		}
		defer func() {
			if rerr := tx.Close(); rerr != nil && err == nil {
				err = rerr
			}
		}()
	} else {
		cli.SayInterrupted(ios, backup.Options{Now: now}, found.Store.Info())
	}
	var o fix.Outcome
	if err := pipe.Plan(ctx, []fix.Target{{Store: found.Store, Ref: found.Ref}}, func(out fix.Outcome) bool {
		o = out
		return true
	}); err != nil {
		return err
	}
	if f.Format() == "json" {
		// One document whatever happens next, like sessfix fix's: the
		// outcome, the edits and, once written, the backup run.
		defer func() {
			if jerr := document(opts, o, mode.Writes()); err == nil {
				err = jerr
			}
		}()
	}
	if err := notPlanned(opts, o, mode); err != nil {
		return err
	}
	if !o.Changes() {
		ios.Statusf("nothing to change")
		return nil
	}
	return write(ctx, opts, tx, &o, mode)
}

// notPlanned is the error of a cut whose session was not planned: the
// cut refused, the session not loaded, or held back as possibly in use
// (its plan shown by a dry run). It is nil for a planned session.
func notPlanned(opts *Options, o fix.Outcome, mode cli.WriteMode) error {
	switch o.Status {
	case fix.Failed:
		var refused *surgery.RefusedError
		var amb *surgery.AmbiguousError
		if errors.As(o.Err, &amb) {
			return cli.WithHints(&cli.FlagError{Err: o.Err}, "list the messages and parts with `"+cli.ShowCommand(o.ID, opts.Paths)+"`")
		}
		if errors.As(o.Err, &refused) {
			return cli.WithHints(o.Err, "see the session with `"+cli.ShowCommand(o.ID, opts.Paths)+"`")
		}
		if o.Step == fix.StepLoad {
			return fmt.Errorf("session %s cannot be loaded: %w", o.ID, o.Err)
		}
		return o.Err
	case fix.SkippedBusy:
		if !mode.Writes() && o.Changes() && opts.Factory.Format() != "json" {
			// Shown, marked as skipped, as sessfix fix --dry-run does.
			if err := show(opts, o); err != nil {
				return err
			}
		}
		return cli.WithHints(&busyError{fmt.Sprintf("session %s: %s, so OpenCode may still be writing it; nothing was written", o.ID, o.Use.Why)},
			"let OpenCode finish the turn (or close it), then run the command again; --force writes anyway")
	}
	return nil
}

// write shows the plan of o, asks (or not, as mode says) and writes it in
// one backup run through pipe; o records the run and how it ended, for the
// JSON document.
func write(ctx context.Context, opts *Options, tx *fix.Tx, o *fix.Outcome, mode cli.WriteMode) error {
	f := opts.Factory
	ios := f.IOStreams
	if o.Forced {
		ios.Statusf("WARNING: session %s may still be in use (%s); writing anyway because of --force", o.ID, o.Use.Why)
	}
	switch {
	case f.Format() != "json":
		if err := show(opts, *o); err != nil {
			return err
		}
	case mode == cli.WriteAsk:
		// The document follows the answer: the question needs the plan.
		_ = plandoc.WritePlans(ios.ErrOut, []fix.Outcome{*o}, ios.ColorEnabled())
	}
	edits := len(o.Plan.Changes.Edits)
	if err := cli.ConfirmWrite(ctx, ios, f.Prompt(), mode, plural.Count(edits, "edit", "edits")); err != nil {
		return err
	}
	run, err := tx.Apply(ctx, []fix.Outcome{*o})
	o.Run = run
	if err != nil {
		o.Status, o.Step, o.Err = fix.Failed, fix.StepWrite, err
		if run != "" {
			return cli.WithHints(err, "undo what was written with `sessfix undo "+run+"`")
		}
		return err
	}
	o.Status = fix.Applied
	ios.Statusf("%s session %s: %s", opts.Verb, o.ID, plural.Count(edits, "edit", "edits"))
	if opts.Written != nil {
		if err := opts.Written(ctx, *o, run); err != nil {
			return cli.WithHints(err, "undo what was written with `sessfix undo "+run+"`")
		}
	}
	ios.Statusf("backup run %s; undo with: sessfix undo %s", run, run)
	return nil
}

// show prints the plan on stdout, or with --diff the diff there and the
// plan on stderr.
func show(opts *Options, o fix.Outcome) error {
	f := opts.Factory
	out, err := f.OpenOutput()
	if err != nil {
		return err
	}
	plans := []fix.Outcome{o}
	if opts.Diff {
		err = plandoc.WriteDiffs(out.W, plans, out.Color)
		_ = plandoc.WritePlans(f.IOStreams.ErrOut, plans, false)
	} else {
		err = plandoc.WritePlans(out.W, plans, out.Color)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// document prints the `--format json` document of a cut, sessfix fix's
// (docs/json-output.md): o is the session's outcome, written whether the
// command was to write.
func document(opts *Options, o fix.Outcome, written bool) error {
	f := opts.Factory
	info := o.Store.Info()
	if o.Plan != nil && o.Plan.Changes != nil && o.Plan.Changes.Store.Path != "" {
		// Where the change is written: a fork of an export file is a
		// new file, and its backup run is that file's.
		info = o.Plan.Changes.Store
	}
	doc := plandoc.NewFixDocument(&plandoc.FixRun{
		Version: f.Build.Version, Written: written && o.Run != "",
		Stores: []store.Info{info}, Runs: map[string]string{info.Path: o.Run},
		Sessions: []fix.Outcome{o},
	})
	return f.WriteDocument(doc)
}

// busyError is a session the settle policy calls busy: exit 4, like a
// locked store.
type busyError struct{ msg string }

func (e *busyError) Error() string { return e.msg }
func (e *busyError) Unwrap() error { return store.ErrLocked }
