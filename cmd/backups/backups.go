package backups

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/report"
)

// BackupsOptions are the parsed inputs of `sessfix backups`.
type BackupsOptions struct {
	Factory *cli.Factory
	// OlderThan is prune's --older-than.
	OlderThan string
	// Backup locates the journal; its zero value uses the state directory.
	Backup backup.Options
}

// NewCmdBackups returns `sessfix backups` with its `prune` subcommand.
func NewCmdBackups(f *cli.Factory, runF func(context.Context, *BackupsOptions) error) *cobra.Command {
	opts := &BackupsOptions{Factory: f}
	cmd := &cobra.Command{
		Annotations: cli.Prints("text", "json"),
		Use:         "backups",
		Short:       "List the backups of sessfix fix runs",
		Long: `List every backup run, newest first: its id, when it ran, its state (applied, undone, failed,
incomplete), how many sessions and edits it holds, and the store it changed. Undo one with ` + "`sessfix undo RUN`" + `.
Backups live in $SESSFIX_STATE_DIR, else $XDG_STATE_HOME/sessfix, else ~/.local/state/sessfix.`,
		Example: `  sessfix backups
  sessfix backups --format json
  sessfix backups prune --older-than 30d`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunList(cmd.Context(), opts)
		},
	}
	prune := &cobra.Command{
		Use:   "prune --older-than AGE",
		Short: "Delete backup runs older than an age",
		Long: `Delete backup runs older than --older-than (a Go duration such as 72h, or days: 30d). A pruned run
can no longer be undone.`,
		Example: `  sessfix backups prune --older-than 30d`,
		Args:    cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunPrune(cmd.Context(), opts)
		},
	}
	prune.Flags().StringVar(&opts.OlderThan, "older-than", "", "delete runs older than `AGE` (e.g. 30d, 72h)")
	_ = prune.MarkFlagRequired("older-than")
	cmd.AddCommand(prune)
	return cmd
}

func (o *BackupsOptions) backupOptions() backup.Options {
	b := o.Backup
	if b.Now == nil {
		b.Now = o.Factory.Now
	}
	return b
}

// RunList does the work of `sessfix backups`.
func RunList(ctx context.Context, opts *BackupsOptions) error {
	f := opts.Factory
	runs, err := backup.List(opts.backupOptions())
	if err != nil {
		return err
	}
	if runs == nil {
		runs = []backup.RunInfo{}
	}
	if f.Format() == "text" && len(runs) == 0 {
		f.IOStreams.Statusf("no backup runs")
		return nil
	}
	out, err := f.OpenOutput()
	if err != nil {
		return err
	}
	if err := printRuns(out.W, f.Format(), runs); err != nil {
		out.Close()
		return fmt.Errorf("cannot write the list of runs: %w", err)
	}
	return out.Close()
}

// printRuns writes runs as JSON or as a table.
func printRuns(out io.Writer, format string, runs []backup.RunInfo) error {
	if format == "json" {
		return report.WriteJSON(out, runs)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tTIME\tSTATE\tSESSIONS\tEDITS\tSTORE")
	for _, r := range runs {
		state := r.State
		if r.Problem != "" {
			state += " (" + r.Problem + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s %s\n", r.ID, r.Time.Local().Format(time.DateTime), state, r.Sessions, r.Edits, r.Store.Shape, r.Store.Path)
	}
	return tw.Flush()
}

// RunPrune does the work of `sessfix backups prune`.
func RunPrune(ctx context.Context, opts *BackupsOptions) error {
	age, err := ParseAge(opts.OlderThan)
	if err != nil {
		return &cli.FlagError{Err: err}
	}
	removed, err := backup.Prune(opts.backupOptions(), age)
	for _, r := range removed {
		opts.Factory.IOStreams.Statusf("removed %s (%s)", r.ID, r.Time.Local().Format(time.DateTime))
	}
	if err != nil {
		return err
	}
	if len(removed) == 0 {
		opts.Factory.IOStreams.Statusf("no backup run is older than %s", opts.OlderThan)
		return nil
	}
	opts.Factory.IOStreams.Statusf("pruned %s older than %s", plural.Count(len(removed), "backup run", "backup runs"), opts.OlderThan)
	return nil
}

// ParseAge parses a Go duration or a whole number of days ("30d").
func ParseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("invalid --older-than %q: want a number of days like 30d, or a duration like 72h", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("invalid --older-than %q: want a number of days like 30d, or a duration like 72h", s)
	}
	return d, nil
}
