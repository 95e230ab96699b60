// Package cut runs a session cut of `sessfix drop` and `sessfix rewind`,
// and the copy of `sessfix fork`, through the repair pipeline (pkg/fix) and
// the flow every writing command shares (cmd/internal/write): the write
// transaction begun before the plan, the settle policy's busy check, the
// plan or its diff, the question on a terminal (--yes, --dry-run), one
// backup run, the atomic write and the read-back. The planners are
// pkg/surgery's; what is cut's own is one session, its messages and its
// JSON document.
package cut

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/plandoc"
	"github.com/sessfix/sessfix/cmd/internal/write"
	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/opencode"
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

	// Apply replaces backup.Apply in the write transaction (tests:
	// fix.WriteOptions.Apply).
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
	sopts := &scan.Options{OpenCode: f.OpenCode()}
	if err := cli.SetSettle(sopts, opts.Settle, opts.Abandon); err != nil {
		return err
	}
	if opts.Diff && !opts.DryRun {
		return cli.RerunWith(cli.FlagErrorf("--diff needs --dry-run"), "--dry-run")
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
	sopts.Now, sopts.Activity = now, opencode.StoreActivity(disc.Stores)
	pipe := &fix.Pipeline{
		Scan:      sopts,
		Fix:       fix.Options{Now: now, Scan: sopts},
		SkipInUse: true,
		Force:     opts.Force,
		Workers:   1,
		Planner:   func(s *store.Session) (*fix.SessionPlan, error) { return planner(s, sopts) },
		Write:     fix.WriteOptions{Backup: backup.Options{Now: now}, Apply: opts.Apply},
	}
	fl := write.New(f, pipe, write.Options{DryRun: opts.DryRun, Yes: opts.Yes, Diff: opts.Diff, UndoHint: undoHint})
	defer func() {
		if cerr := fl.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if err := fl.Begin(ctx, found.Store); err != nil {
		if f.Format() == "json" && errors.Is(err, store.ErrLocked) {
			// Another sessfix holds the store (exit 4): the document
			// still says so, as the store's error.
			info := found.Store.Info()
			doc := plandoc.NewFixDocument(&plandoc.FixRun{Version: f.Build.Version, Stores: []store.Info{info},
				Errs: map[string]error{info.Path: err}})
			return errors.Join(err, f.WriteDocument(doc))
		}
		return err
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
			if jerr := document(opts, o, fl.Mode().Writes()); err == nil {
				err = jerr
			}
		}()
	}
	if err := notPlanned(opts, fl, o); err != nil {
		return err
	}
	if !o.Changes() {
		fl.Nothing(0)
		return nil
	}
	return apply(ctx, opts, fl, &o)
}

// notPlanned is the error of a cut whose session was not planned: the
// cut refused, the session not loaded, or held back as possibly in use
// (its plan shown by a dry run). It is nil for a planned session.
func notPlanned(opts *Options, fl *write.Flow, o fix.Outcome) error {
	switch o.Status {
	case fix.Failed:
		var refused *surgery.RefusedError
		var amb *surgery.AmbiguousError
		var none *surgery.NoRecordError
		if errors.As(o.Err, &amb) || errors.As(o.Err, &none) {
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
		if !fl.Mode().Writes() && o.Changes() && opts.Factory.Format() != "json" {
			// Shown, marked as skipped, as sessfix fix --dry-run does.
			if err := fl.Show([]fix.Outcome{o}); err != nil {
				return err
			}
		}
		return cli.WithHints(&busyError{fmt.Sprintf("session %s: %s, so OpenCode may still be writing it; nothing was written", o.ID, o.Use.Why)},
			"let OpenCode finish the turn (or close it), then run the command again; --force writes anyway")
	}
	return nil
}

// apply shows the plan of o, asks (or not, as the flow decided) and
// writes it in one backup run; o records the run and how it ended, for
// the JSON document.
func apply(ctx context.Context, opts *Options, fl *write.Flow, o *fix.Outcome) error {
	ios := opts.Factory.IOStreams
	if o.Forced {
		fl.Forced(*o, "writing")
	}
	if err := fl.Show([]fix.Outcome{*o}); err != nil {
		return err
	}
	edits := len(o.Plan.Changes.Edits)
	if err := fl.Confirm(ctx, plural.Count(edits, "edit", "edits")); err != nil {
		return err
	}
	run, err := fl.Apply(ctx, o.Store, []fix.Outcome{*o})
	o.Run = run
	if err != nil {
		o.Status, o.Step, o.Err = fix.Failed, fix.StepWrite, err
		return err
	}
	o.Status = fix.Applied
	ios.Statusf("%s session %s: %s", opts.Verb, o.ID, plural.Count(edits, "edit", "edits"))
	if opts.Written != nil {
		if err := opts.Written(ctx, *o, run); err != nil {
			return fl.Failed(err, run)
		}
	}
	fl.Undo(run)
	return nil
}

// undoHint is a cut's hint on a run written that then failed.
func undoHint(run string, _ bool) string {
	return "undo what was written with `sessfix undo " + run + "`"
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
