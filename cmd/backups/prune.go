package backups

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/backup"
)

// MinPruneAge is the youngest --older-than prune accepts without --force:
// the runs of the last day are the ones a user still undoes.
const MinPruneAge = 24 * time.Hour

func newCmdPrune(opts *BackupsOptions, runF func(context.Context, *BackupsOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "prune --older-than AGE",
		Short: "Delete backup runs older than an age",
		Long: `Delete backup runs older than --older-than (a Go duration such as 72h, or days: 30d). A pruned run
can no longer be undone. The runs of one command (one fix over many stores) go together, once the newest
of them is older than the age. Two kinds of run are never deleted, however old, and prune says why: one
whose manifest sessfix cannot read (delete it by hand if you do not need it), and one a killed sessfix
left half-written (the next run on its store puts it back; or run sessfix undo RUN).

prune lists the runs it would delete and asks on a terminal; --yes deletes without asking, --dry-run only
lists. Without a terminal and without --yes it deletes nothing. An age under a day (1d, 24h) would delete
runs that may still need undoing: it is refused unless --force (--dry-run lists them anyway).

Exit codes:
  0    the runs were deleted, or listed by --dry-run, or none is that old
  1    nothing deleted: the question was declined, or there is no terminal to ask on (add --yes)
  2    usage error, or an age under a day without --force
  3    a run could not be read or deleted`,
		Example: `  sessfix backups prune --older-than 30d
  sessfix backups prune --older-than 30d --dry-run
  sessfix backups prune --older-than 90d --yes`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunPrune(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.OlderThan, "older-than", "", "delete runs older than `AGE` (e.g. 30d, 72h; at least 1d without --force)")
	fl.BoolVarP(&opts.DryRun, "dry-run", "n", false, "list the runs that would be deleted, delete nothing")
	fl.BoolVarP(&opts.Yes, "yes", "y", false, "delete without asking")
	fl.BoolVar(&opts.Force, "force", false, "accept an --older-than under a day (even 0: every run)")
	_ = cmd.MarkFlagRequired("older-than")
	return cmd
}

// RunPrune does the work of `sessfix backups prune`.
func RunPrune(ctx context.Context, opts *BackupsOptions) error {
	f := opts.Factory
	ios := f.IOStreams
	age, err := ParseAge(opts.OlderThan)
	if err != nil {
		return &cli.FlagError{Err: err}
	}
	if age < MinPruneAge && !opts.Force && !opts.DryRun {
		return cli.WithHints(cli.FlagErrorf("--older-than %s would delete runs younger than a day, which may still need undoing; add --force to delete them anyway", opts.OlderThan),
			"see what it would delete first: sessfix backups prune --older-than "+opts.OlderThan+" --dry-run")
	}
	old, kept, err := backup.Older(opts.backupOptions(), age)
	if err != nil {
		return err
	}
	for _, k := range kept {
		fmt.Fprintf(ios.ErrOut, "warning: kept backup run %s: %s\n", k.ID, k.Why)
		if k.Problem != "" {
			fmt.Fprintf(ios.ErrOut, "hint: if you do not need it, delete it by hand: rm -r %s\n", cli.ShellArg(k.Dir))
		} else {
			fmt.Fprintf(ios.ErrOut, "hint: put it back now with `%s`, then prune again\n", cli.CommandLine("undo", k.ID))
		}
	}
	if len(old) == 0 {
		ios.Statusf("no backup run is older than %s", opts.OlderThan)
		return nil
	}
	what := plural.Count(len(old), "backup run", "backup runs")
	mode := cli.DecideWrite(f.Prompt(), opts.DryRun, opts.Yes)
	if mode != cli.WriteYes {
		// What would go, on stdout: the answer of a dry run, the
		// question's subject otherwise.
		out, err := f.OpenOutput()
		if err != nil {
			return err
		}
		err = printRuns(out.W, "text", old)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	switch mode {
	case cli.WriteDry:
		ios.Statusf("dry run: %s older than %s would be deleted", what, opts.OlderThan)
		return nil
	case cli.WriteNoTerminal:
		return cli.WithHints(cli.FindingsErrorf("nothing deleted: %s; add --yes to delete the %s", cli.NotAsked(ios, "list"), what),
			"sessfix backups prune --older-than "+opts.OlderThan+force(opts.Force)+" --yes")
	case cli.WriteAsk:
		ok, err := f.Prompt().Confirm(ctx, "delete "+what+"? they can no longer be undone")
		if err != nil {
			return err
		}
		if !ok {
			ios.Statusf("nothing deleted")
			return cli.ErrFindings
		}
	}
	removed, err := backup.Remove(old)
	for _, r := range removed {
		ios.Statusf("removed %s (%s)", r.ID, r.Time.Local().Format(time.DateTime))
	}
	if err != nil {
		return err
	}
	ios.Statusf("pruned %s older than %s", plural.Count(len(removed), "backup run", "backup runs"), opts.OlderThan)
	return nil
}

// force is the --force of a suggested command line.
func force(on bool) string {
	if on {
		return " --force"
	}
	return ""
}
