package undo

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/pkg/backup"
)

// UndoOptions are the parsed inputs of `sessfix undo`.
type UndoOptions struct {
	Factory *cli.Factory
	RunID   string
	Last    bool
	// Paths limit --last to the runs of the stores at (or under) them.
	Paths []string
	Force bool
	// Backup locates the journal; its zero value uses the state directory.
	Backup backup.Options
}

// NewCmdUndo returns `sessfix undo`. runF replaces the work in tests.
func NewCmdUndo(f *cli.Factory, runF func(context.Context, *UndoOptions) error) *cobra.Command {
	opts := &UndoOptions{Factory: f}
	cmd := &cobra.Command{
		Annotations: cli.Prints("text", "json"),
		Use:         "undo [RUN | --last [PATH...]]",
		Short:       "Undo a sessfix fix run",
		Long: `Put back, byte for byte, what one run of sessfix fix, drop, rewind or fork changed: edited records get
their old bytes, deleted and quarantined records come back, added records go away (a fork's whole
session). Runs are listed by ` + "`sessfix backups`" + `.

--last undoes the last operation: every run the newest sessfix command that wrote (one fix over many
stores) made and that is not undone yet; ` + "`sessfix undo last`" + ` is the same. A second --last steps back
to the command before. With PATHs, only runs of the stores at or under them count, and only those are
undone (an opencode.db, an export file, a data dir).

undo refuses, and changes nothing, when a record no longer holds the bytes the fix wrote (OpenCode or
someone changed the session since); --force restores anyway and overwrites those changes. Undoing a run
twice does nothing. --format json prints what was restored or refused (docs/json-output.md).

Exit codes:
  0    restored (or already undone)
  2    usage error
  3    no such run, records changed since the fix (without --force), or a write failed
  4    the store is locked by another sessfix`,
		Example: `  sessfix undo --last
  sessfix undo --last ~/.local/share/opencode/opencode.db
  sessfix undo 20261121T153000Z-k3x9qa
  sessfix undo --last --force`,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case opts.Last:
				opts.Paths = args
				for _, a := range args {
					if _, err := os.Stat(a); err != nil && backup.IsRunID(a) {
						opts.RunID = a // a run id, not a path: refused below
					}
				}
			case len(args) > 1:
				return cli.WithHints(cli.FlagErrorf("undo takes one run id, got %d arguments", len(args)),
					"to undo the newest run of a store: sessfix undo --last PATH")
			case len(args) == 1 && args[0] == "last":
				// `undo last` reads as --last and does what it does: a
				// run id never reads "last".
				opts.Last = true
			case len(args) == 1:
				opts.RunID = args[0]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunUndo(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Last, "last", false, "undo every run of the newest command not undone yet (of the stores at the PATHs, when given)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "restore even records that changed since the fix")
	return cmd
}

// RunUndo does the work of `sessfix undo`.
func RunUndo(ctx context.Context, opts *UndoOptions) error {
	f := opts.Factory
	ios := f.IOStreams
	switch {
	case opts.RunID == "" && !opts.Last:
		return cli.WithHints(cli.FlagErrorf("name the run to undo, or pass --last"), "list runs with `sessfix backups`")
	case opts.RunID != "" && opts.Last:
		return cli.FlagErrorf("give a run id or --last, not both")
	}
	bopts := opts.Backup
	if bopts.Now == nil {
		bopts.Now = f.Now
	}
	if opts.Last {
		return undoLast(ctx, opts, bopts)
	}
	run := opts.RunID
	res, err := undoRun(ctx, f, bopts, run, opts.Force)
	if f.Format() == "json" {
		if perr := printJSON(f, run, res, opts.Force, err); perr != nil {
			return errors.Join(err, perr)
		}
	}
	// Without --force the refusals are the error's own lines.
	if res != nil && opts.Force {
		for _, r := range res.Refused {
			ios.Statusf("overwrote %s: %s", r.Target, r.Reason)
		}
	}
	if err != nil {
		switch {
		case errors.Is(err, backup.ErrNoRun):
			return cli.WithHints(err, "list runs with `sessfix backups`")
		}
		return err
	}
	if res.Message != "" {
		ios.Statusf("%s", res.Message)
	} else {
		ios.Statusf("undid run %s on %s store %s: %d restored, %d already as before", res.RunID, res.Store.Shape, res.Store.Path, len(res.Restored), res.Unchanged)
	}
	return nil
}

// undoRun undoes run in a write transaction on the store it changed
// (backup.BeginTx, which takes the writer lock and first rolls back what a
// killed sessfix left half-written there, said on stderr). A run undone
// already, or whose store is gone, is settled before any lock is taken
// (backup.Undoable).
func undoRun(ctx context.Context, f *cli.Factory, bopts backup.Options, run string, force bool) (*backup.UndoResult, error) {
	info, done, err := backup.Undoable(bopts, run)
	if err != nil || done != nil {
		return done, err
	}
	tx, rbs, err := backup.BeginTx(ctx, bopts, info, false)
	cli.SayRollbacks(f.IOStreams, rbs)
	if err != nil {
		return nil, backup.UndoBeginFailed(run, err)
	}
	res, err := tx.Undo(ctx, run, force)
	if cerr := tx.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return res, err
}

// canonical is p absolute, cleaned, with symbolic links resolved when it
// exists: two names of one store compare equal.
func canonical(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	return filepath.Clean(p)
}

// printJSON writes the undo document of one run to stdout or --output.
func printJSON(f *cli.Factory, run string, res *backup.UndoResult, force bool, err error) error {
	return f.WriteDocument(NewUndoDocument(f.Build.Version, run, res, force, err))
}
