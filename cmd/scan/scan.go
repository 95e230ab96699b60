package scan

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/config"
	"github.com/sessfix/sessfix/pkg/report"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
)

// ScanOptions are the parsed inputs of `sessfix scan`.
type ScanOptions struct {
	Factory *cli.Factory

	// Paths are the stores named on the command line; empty means discover.
	Paths []string
	// Select and Ignore are rule codes or prefixes.
	Select, Ignore []string
	// FailOn is the severity name at or above which findings exit 1.
	FailOn string
	// Sessions limits the scan to these ids.
	Sessions []string
	// Settle and Abandon are the settle policy's windows (--settle,
	// --abandon).
	Settle, Abandon time.Duration
	// Deep runs SQLite's full integrity_check for SF501 (--deep).
	Deep bool

	// Config is the config file whose suppressions apply; nil when none
	// was found. Its other settings are already merged into the fields
	// above (flags win).
	Config *config.Config

	// Scan runs the rules; nil means scan.Run. Tests may replace it.
	Scan func(context.Context, []store.Store, *scan.Options) (*scan.Result, error)
}

// NewCmdScan returns `sessfix scan`. runF replaces the command's work in
// tests; nil runs it.
func NewCmdScan(f *cli.Factory, runF func(context.Context, *ScanOptions) error) *cobra.Command {
	opts := &ScanOptions{Factory: f}
	filters := &cli.Filters{}
	cmd := &cobra.Command{
		Annotations: cli.Prints(formats()...),
		Use:         "scan [PATH...]",
		Short:       "Find what breaks OpenCode sessions",
		Long: `Scan OpenCode's session stores and report every problem that breaks a session or will break it on
the next prompt: empty messages, thinking in the wrong place, unfinished tools, unreadable records, and the
provider errors stored from failed attempts.

With no PATH, sessfix looks where OpenCode keeps its data: $XDG_DATA_HOME/opencode (default
~/.local/share/opencode) with its database, JSON storage/ tree and project trees, and ~/.opencode/sessions.
A PATH may be a data dir, a storage/ dir, a sessions dir, a project tree, an opencode.db file or an
` + "`opencode export`" + ` file. A PATH that cannot be read is reported, the others are scanned, and scan exits 3.
scan never writes to a store. Healthy sessions are listed only in --format json. A turn OpenCode may still
be writing (its newest assistant message unfinished, changed within --settle, or OpenCode holding the
store within --abandon) is not reported; docs/fixing.md says how sessfix tells.

On a terminal, findings are grouped by store and session with a summary; piped or with --output, each
finding is one line "LOCATION: SEVERITY CODE message"; --format json prints one JSON document
(docs/json-output.md). Store names, notes and hints go to stderr.

Each SQLite database also gets a health check (SF501-SF504): SQLite's quick_check, or with --deep its full
integrity_check, which also checks every index against its table; a damaged database is an SF501 error
even when SQL cannot open it. sessfix does not repair these yet.

--fail-on takes a severity (error, warning, info), rule codes or prefixes, or both: "error,SF105" fails on
errors and on any SF105 finding. Settings can live in .sessfix.yaml or .sessfix.json at the repository root
(or --config FILE): select, ignore, fail-on, settle and suppressions of single findings with a reason; flags
win over the file. --format sarif, github and junit are for CI (docs/ci.md).

Exit codes:
  0    no finding at or above --fail-on
  1    findings at or above --fail-on remain
  2    usage error: bad flag, unknown rule code or prefix, invalid config file
  3    no store found, or a store is unreadable or unsupported
  4    a store is locked or busy
  129  stopped by SIGHUP
  130  interrupted (Ctrl-C)
  143  stopped by SIGTERM`,
		Example: `  # scan the stores of the current user
  sessfix scan

  # scan one database, only thinking-order and empty-text rules
  sessfix scan ~/.local/share/opencode/opencode.db --select SF103,SF104

  # check a database completely, indexes included
  sessfix scan ~/.local/share/opencode/opencode.db --deep --select SF5

  # fail CI only on errors; write JSON for a bot
  sessfix scan --fail-on error --format json --output findings.json

  # one session, ignoring all store-integrity rules
  sessfix scan --session ses_3a1f2b9c8d7eAbCdEfGhIjKlMn --ignore SF2

  # in GitHub Actions: annotations on the pull request, or SARIF for code scanning
  sessfix scan fixtures/ --format github
  sessfix scan fixtures/ --format sarif --output sessfix.sarif`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			cfg, err := f.ApplyConfig(cmd, cli.ConfigTargets{Filters: filters, Settle: &opts.Settle})
			if err != nil {
				return err
			}
			if cfg.Path != "" {
				opts.Config = cfg
			}
			opts.Select, opts.Ignore, opts.FailOn = filters.Select, filters.Ignore, filters.FailOn
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunScan(cmd.Context(), opts)
		},
	}
	cli.AddFilterFlags(cmd, filters, "run")
	fl := cmd.Flags()
	fl.StringArrayVar(&opts.Sessions, "session", nil, "scan only the session with this `ID` (repeatable)")
	fl.BoolVar(&opts.Deep, "deep", false, "check each database with sqlite's full integrity_check (indexes too) instead of quick_check")
	cli.AddSettleFlags(cmd, &opts.Settle, &opts.Abandon)
	_ = cmd.RegisterFlagCompletionFunc("session", f.SessionIDs)
	return cmd
}

// formats are the --format values scan prints: every format of
// pkg/report, text first.
func formats() []string {
	out := []string{"text"}
	for _, f := range report.Formats() {
		if f != "text" {
			out = append(out, f)
		}
	}
	return out
}

// RunScan does the work of `sessfix scan`.
func RunScan(ctx context.Context, opts *ScanOptions) error {
	f := opts.Factory
	filters := &cli.Filters{Select: opts.Select, Ignore: opts.Ignore, FailOn: opts.FailOn}
	sopts, failPolicy, err := filters.ScanFilters()
	if err != nil {
		return err
	}
	if err := cli.SetSettle(sopts, opts.Settle, opts.Abandon); err != nil {
		return err
	}
	sopts.Sessions, sopts.Now, sopts.Deep = opts.Sessions, f.Now, opts.Deep
	sopts.OpenCode = f.OpenCode()

	cli.BatchGC()
	disc, err := f.OpenStores("scan", opts.Paths)
	if err != nil {
		return noInputs(f, opts, failPolicy, err)
	}
	defer disc.Close()
	read := cli.ReadPaths(opts.Paths, disc)
	if opts.Sessions, err = cli.ResolveSessions(ctx, disc.Stores, opts.Sessions, read); err != nil {
		if fe := (*cli.FlagError)(nil); errors.As(err, &fe) {
			return err // a usage error (an ambiguous prefix): no document
		}
		// A prefix that names no session: the stores, none scanned.
		res := &scan.Result{}
		for _, st := range disc.Stores {
			res.Stores = append(res.Stores, scan.StoreResult{Info: st.Info()})
		}
		return sessionsNotFound(f, &report.Report{Result: res, Version: f.Build.Version, FailPolicy: failPolicy}, err)
	}
	sopts.Sessions = opts.Sessions

	res, err := scanStores(ctx, opts, sopts, disc.Stores)
	if err != nil {
		return err
	}
	for _, in := range disc.Failed {
		// In the report too, where its format has a place for it.
		res.Stores = append(res.Stores, scan.StoreResult{Info: store.Info{Path: in.Path}, Err: in.Err})
	}
	notFound := checkSessionsFound(opts.Sessions, res, read)

	if opts.Config != nil {
		unused := opts.Config.Apply(res.Findings)
		if len(opts.Sessions) == 0 && len(sopts.Select) == 0 && len(sopts.Ignore) == 0 {
			// Only a full scan can tell that a suppression is stale.
			f.WarnUnusedSuppressions(opts.Config, unused)
		}
	}
	fixArgs := []string{"fix"}
	for _, id := range opts.Sessions {
		fixArgs = append(fixArgs, "--session", id)
	}
	rep := &report.Report{Result: res, Version: f.Build.Version, FailPolicy: failPolicy,
		FixCommand: cli.CommandLine(append(fixArgs, fixPaths(read, disc)...)...),
		ReadOnly:   func(info store.Info) bool { return shapes.CheckWritable(info) != nil }}
	if notFound != nil {
		return sessionsNotFound(f, rep, notFound)
	}
	if err := printReport(f, rep); err != nil {
		return err
	}
	f.SuppressedNote(opts.Config, rep.Summarize().Suppressed)

	// Every store that could be read was scanned and reported: now what
	// could not be.
	var errs, listErrs []error
	if err := cli.InputsFailed("scan", disc); err != nil {
		errs = append(errs, err)
	}
	for _, sr := range res.Stores {
		if sr.Err != nil && sr.Info.Shape != "" {
			listErrs = append(listErrs, report.StoreErrorf(sr))
		}
	}
	if len(listErrs) > 0 {
		errs = append(errs, cli.WithHints(errors.Join(listErrs...), "check that you can read the store's files"))
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if rep.Failing() > 0 {
		return cli.ErrFindings
	}
	return nil
}

// scanStores runs the scan, saying on stderr which stores it scans and
// showing progress on a terminal.
func scanStores(ctx context.Context, opts *ScanOptions, sopts *scan.Options, disc []store.Store) (*scan.Result, error) {
	ios := opts.Factory.IOStreams
	stores := make([]store.Store, len(disc))
	for i, st := range disc {
		stores[i] = announcing{Store: st, announce: func(info store.Info, n int, err error) {
			if err == nil {
				ios.Statusf("scanning %s store %s (%s)", info.Shape, info.Path, plural.Count(n, "session", "sessions"))
			}
		}}
	}
	var prog interface {
		Update(int, int)
		Stop()
	}
	sopts.Progress = func(done, total int) {
		if prog == nil {
			// Started at the first finished session, after the store
			// lines, so the counter never interleaves with them.
			prog = ios.StartProgress("scanning", "sessions")
		}
		prog.Update(done, total)
	}
	run := opts.Scan
	if run == nil {
		run = scan.Run
	}
	res, err := run(ctx, stores, sopts)
	if prog != nil {
		prog.Stop()
	}
	return res, err
}
