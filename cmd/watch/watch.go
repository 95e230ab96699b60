package watch

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/ocenv"
	"github.com/sessfix/sessfix/pkg/report"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/watch"
)

// WatchOptions are the parsed inputs of `sessfix watch`.
type WatchOptions struct {
	Factory *cli.Factory

	Paths          []string
	Sessions       []string
	Select, Ignore []string
	DryRun         bool
	Verbose        bool
	Strategies     []string
	Placeholder    string
	Settle         time.Duration
	Abandon        time.Duration
	Poll           time.Duration
	// Suppressed reports findings the config file suppresses; they are
	// never repaired.
	Suppressed func(scan.Finding) bool

	// Watch replaces the watcher's run (tests); nil runs watch.New(o).Run.
	Watch func(ctx context.Context, o watch.Options) error
}

// NewCmdWatch returns `sessfix watch`. runF replaces the command's work in
// tests.
func NewCmdWatch(f *cli.Factory, runF func(context.Context, *WatchOptions) error) *cobra.Command {
	opts := &WatchOptions{Factory: f}
	cmd := &cobra.Command{
		Annotations: cli.Prints("text", "json"),
		Use:         "watch [PATH...]",
		Short:       "Repair sessions live, as soon as they are safe to touch",
		Long: `Watch OpenCode's session stores and repair broken sessions while you work: a crash, a kill or an
ESC in the middle of a turn never leaves a bricked session behind. Stores are found as ` + "`sessfix scan`" + `
finds them.

watch scans every session once, then follows file events (inotify, kqueue, ...; --poll for filesystems
without them). A session is examined once it has been quiet for --settle (0: at once); a session whose
newest assistant message is unfinished while OpenCode has the store open (a long tool, a long block) is
left alone until OpenCode lets go of the store or it has been quiet for --abandon. The same policy
decides for scan and fix (docs/fixing.md). Repairs are the default repairs of ` + "`sessfix fix --yes`" + `, including the repair of
a stored provider error; each is backed up and can be reverted with ` + "`sessfix undo RUN`" + `.

One line per event that matters (repaired, skipped-busy, unfixed, failed) on stdout; --format json
prints JSON Lines. --verbose adds every examination, --quiet keeps only repairs and failures.
SIGINT, SIGTERM or SIGHUP stops watch; a repair being written is finished first. See docs/watch.md.

A store that does not exist yet (OpenCode has not run, a path named that does not exist) is waited
for; a store that is replaced (mv, a restore, a sync tool), appears later or goes away is followed.

Exit codes:
  2    usage error
  3    a store cannot be read or watched
  129  stopped by SIGHUP
  130  stopped by SIGINT (Ctrl-C)
  143  stopped by SIGTERM (kill, systemctl stop)`,
		Example: `  # repair the stores of the current user as sessions change
  sessfix watch

  # see what it would do, as JSON Lines
  sessfix watch --dry-run --format json

  # a network filesystem: poll every 5 seconds
  sessfix watch --poll 5s ~/.local/share/opencode`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			// The config file's selects, ignores, settle window, strategies,
			// placeholder and suppressions apply as they do to fix; flags win.
			filters := &cli.Filters{Select: opts.Select, Ignore: opts.Ignore}
			cfg, err := f.ApplyConfig(cmd, cli.ConfigTargets{Filters: filters, Settle: &opts.Settle,
				Strategies: &opts.Strategies, Placeholder: &opts.Placeholder})
			if err != nil {
				return err
			}
			opts.Select, opts.Ignore = filters.Select, filters.Ignore
			if cfg != nil && cfg.Path != "" {
				opts.Suppressed = cfg.Suppressed
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunWatch(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&opts.Sessions, "session", nil, "watch only the session with this `ID` (repeatable)")
	fl.StringSliceVar(&opts.Select, "select", nil, "repair only findings of these rule `CODES` or prefixes")
	fl.StringSliceVar(&opts.Ignore, "ignore", nil, "leave findings of these rule `CODES` or prefixes alone")
	fl.BoolVarP(&opts.DryRun, "dry-run", "n", false, "report what would be repaired, write nothing")
	fl.BoolVarP(&opts.Verbose, "verbose", "v", false, "also report every session examined, lock waits and rescans")
	fl.StringArrayVar(&opts.Strategies, "strategy", nil, "repair `CODE=NAME`, e.g. SF103=strip (repeatable; see docs/fixing.md)")
	fl.StringVar(&opts.Placeholder, "placeholder", fix.DefaultPlaceholder, "`TEXT` for empty and injected text parts (must not be blank)")
	cli.AddSettleFlags(cmd, &opts.Settle, &opts.Abandon)
	fl.DurationVar(&opts.Poll, "poll", 0, "poll the stores every `INTERVAL` instead of following file events")
	_ = cmd.RegisterFlagCompletionFunc("select", cli.RuleCodeList)
	_ = cmd.RegisterFlagCompletionFunc("ignore", cli.RuleCodeList)
	return cmd
}

// RunWatch does the work of `sessfix watch`.
func RunWatch(ctx context.Context, opts *WatchOptions) error {
	f := opts.Factory
	ios := f.IOStreams
	wo, err := newWatchOptions(opts)
	if err != nil {
		return err
	}
	ws, err := openWatched(f, opts.Paths)
	if err != nil {
		return err
	}
	disc := ws.disc
	defer disc.Close()
	out, err := f.OpenOutput()
	if err != nil {
		return err
	}
	defer out.Close()
	p := &printer{w: out.W, json: f.Format() == "json", styles: report.NewStyles(out.Color), verbose: opts.Verbose, quiet: ios.Quiet()}
	wo.Stores, wo.Report = disc.Stores, p.print
	wo.Places, wo.Rediscover = ws.places, ws.rediscover

	for _, st := range disc.Stores {
		info := st.Info()
		ios.Statusf("watching %s store %s", info.Shape, info.Path)
	}
	if len(disc.Stores) > 0 { // with none, the watcher says it waits
		for _, path := range ws.waiting {
			ios.Statusf("no store at %s yet; watching for one to appear", path)
		}
	}
	if !opts.DryRun {
		ios.Statusf("repairs are backed up; list them with `sessfix backups`, revert one with `sessfix undo RUN`")
	}
	run := opts.Watch
	if run == nil {
		run = func(ctx context.Context, o watch.Options) error {
			w, err := watch.New(o)
			if err != nil {
				return err
			}
			return w.Run(ctx)
		}
	}
	if err := run(ctx, wo); err != nil {
		return err
	}
	if p.err != nil {
		return fmt.Errorf("cannot write the watch output: %w", p.err)
	}
	return nil
}

// newWatchOptions checks the flags and turns them into the watcher's
// options, but for the stores and the report.
func newWatchOptions(opts *WatchOptions) (watch.Options, error) {
	f := opts.Factory
	fopts, err := cli.RepairOptions(opts.Strategies, opts.Placeholder)
	if err != nil {
		return watch.Options{}, err
	}
	if opts.Poll < 0 {
		return watch.Options{}, cli.FlagErrorf("invalid --poll %s: must not be negative", opts.Poll)
	}
	if opts.Verbose && f.IOStreams.Quiet() {
		return watch.Options{}, cli.FlagErrorf("--verbose and --quiet cannot be combined")
	}
	sopts := scan.Options{Select: cli.CleanCodes(opts.Select), Ignore: cli.CleanCodes(opts.Ignore), Sessions: opts.Sessions}
	if err := sopts.ValidateFilters(); err != nil {
		return watch.Options{}, &cli.FlagError{Err: err}
	}
	if err := cli.SetSettle(&sopts, opts.Settle, opts.Abandon); err != nil {
		return watch.Options{}, err
	}
	var openCode func() *ocenv.Resolver
	if f.OpenCodeEnv != nil {
		openCode = f.OpenCode
	}
	return watch.Options{
		Settle:     sopts.Settle,
		Abandon:    sopts.Abandon,
		Poll:       opts.Poll,
		DryRun:     opts.DryRun,
		Scan:       sopts,
		Fix:        fopts,
		Suppressed: opts.Suppressed,
		OpenCode:   openCode,
		Write:      fix.WriteOptions{Backup: backup.Options{Now: f.Now}},
	}, nil
}
