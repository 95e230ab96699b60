package backups

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
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
	// DryRun, Yes and Force are prune's --dry-run, --yes and --force.
	DryRun, Yes, Force bool
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
incomplete), what it changed (how many sessions and edits, or for a database repair the change, the database
and the files it backed up) and the store. Undo one with ` + "`sessfix undo RUN`" + `.
Backups live in $SESSFIX_STATE_DIR, else $XDG_STATE_HOME/sessfix, else ~/.local/state/sessfix.`,
		Example: `  sessfix backups
  sessfix backups --format json
  sessfix backups prune --older-than 30d --dry-run`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunList(cmd.Context(), opts)
		},
	}
	cmd.AddCommand(newCmdPrune(opts, runF))
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
	// A run whose manifest cannot be read is one short row (what it
	// changed is unknown) and its problem a line under the table: the
	// problem, a path and an error, would widen every row's STATE column.
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tTIME\tSTATE\tCHANGE\tSTORE")
	var problems []string
	for _, r := range runs {
		change, where := Change(r), strings.TrimSpace(string(r.Store.Shape)+" "+r.Store.Path)
		if r.Problem != "" {
			change, where = "unknown", "-"
			problems = append(problems, fmt.Sprintf("run %s: %s", r.ID, r.Problem))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.Time.Local().Format(time.DateTime), r.State, change, where)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(problems) > 0 {
		fmt.Fprintln(out)
		for _, p := range problems {
			fmt.Fprintln(out, p)
		}
	}
	return nil
}

// Change says what a run changed: "2 sessions, 5 edits", or for a
// database-level run "database salvage of opencode.db (3 files, 12.3 MiB)":
// the change, the database, and the files the run holds.
func Change(r backup.RunInfo) string {
	d := r.Database
	if d == nil {
		return plural.Count(r.Sessions, "session", "sessions") + ", " + plural.Count(r.Edits, "edit", "edits")
	}
	return fmt.Sprintf("database %s of %s (%s, %s)", d.Action, filepath.Base(r.Store.Path),
		plural.Count(d.Files, "file", "files"), size(d.Bytes))
}

// size renders a byte count: "512 bytes", "12.3 KiB", "12.3 MiB",
// "1.2 GiB".
func size(n int64) string {
	switch {
	case n < 1<<10:
		return plural.Count(int(n), "byte", "bytes")
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
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
