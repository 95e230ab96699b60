package undo

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/pkg/backup"
)

// UndoOptions are the parsed inputs of `sessfix undo`.
type UndoOptions struct {
	Factory *cli.Factory
	RunID   string
	Last    bool
	Force   bool
	// Backup locates the journal; its zero value uses the state directory.
	Backup backup.Options
}

// NewCmdUndo returns `sessfix undo`. runF replaces the work in tests.
func NewCmdUndo(f *cli.Factory, runF func(context.Context, *UndoOptions) error) *cobra.Command {
	opts := &UndoOptions{Factory: f}
	cmd := &cobra.Command{
		Annotations: cli.Prints("text", "json"),
		Use:         "undo [RUN | --last]",
		Short:       "Undo a sessfix fix run",
		Long: `Put back, byte for byte, what one ` + "`sessfix fix`" + ` run changed: edited records get their old bytes,
deleted and quarantined records come back, added parts go away. Runs are listed by ` + "`sessfix backups`" + `.

undo refuses, and changes nothing, when a record no longer holds the bytes the fix wrote (OpenCode or
someone changed the session since); --force restores anyway and overwrites those changes. Undoing a run
twice does nothing.

Exit codes:
  0    restored (or already undone)
  2    usage error
  3    no such run, records changed since the fix (without --force), or a write failed
  4    the store is locked by another sessfix`,
		Example: `  sessfix undo --last
  sessfix undo 20261121T153000Z-k3x9qa
  sessfix undo --last --force`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.RunID = args[0]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunUndo(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Last, "last", false, "undo the newest run")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "restore even records that changed since the fix")
	return cmd
}

// RunUndo does the work of `sessfix undo`.
func RunUndo(ctx context.Context, opts *UndoOptions) error {
	ios := opts.Factory.IOStreams
	switch {
	case opts.RunID == "" && !opts.Last:
		return cli.WithHints(cli.FlagErrorf("name the run to undo, or pass --last"), "list runs with `sessfix backups`")
	case opts.RunID != "" && opts.Last:
		return cli.FlagErrorf("give a run id or --last, not both")
	}
	bopts := opts.Backup
	if bopts.Now == nil {
		bopts.Now = opts.Factory.Now
	}
	run := opts.RunID
	if opts.Last {
		run = "last"
	}
	res, err := backup.Undo(ctx, bopts, run, opts.Force)
	// Without --force the refusals are the error's own lines.
	if res != nil && opts.Force {
		for _, r := range res.Refused {
			ios.Statusf("overwrote %s: %s", r.Target, r.Reason)
		}
	}
	if err != nil {
		switch {
		case errors.Is(err, backup.ErrNoRuns), errors.Is(err, backup.ErrNoRun):
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
