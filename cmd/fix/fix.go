package fix

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/pkg/config"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/store"
)

// FixOptions are the parsed inputs of `sessfix fix`.
type FixOptions struct {
	Factory *cli.Factory

	Paths          []string
	Sessions       []string
	Select, Ignore []string
	DryRun         bool
	Diff           bool
	Yes            bool
	Force          bool
	Strategies     []string
	Placeholder    string
	Error          string
	Settle         time.Duration
	Abandon        time.Duration
	// FailOn is --fail-on: which unfixed findings make the command exit 1
	// ("" means warning).
	FailOn string
	// Config is the config file whose suppressions apply (suppressed
	// findings are left alone); nil when none was found.
	Config *config.Config

	// Apply replaces backup.Apply in the write transactions (tests:
	// fix.WriteOptions.Apply): it writes one store's change sets under its
	// writer lock and returns the backup run's id.
	Apply func(ctx context.Context, info store.Info, sets []*store.ChangeSet) (runID string, err error)
	// Activity reports what is seen of other programs using a store (the
	// settle policy's evidence); nil asks the stores (store.Store.Activity).
	Activity func(store.Info) store.Activity
}

// NewCmdFix returns `sessfix fix`. runF replaces the command's work in tests.
func NewCmdFix(f *cli.Factory, runF func(context.Context, *FixOptions) error) *cobra.Command {
	opts := &FixOptions{Factory: f}
	filters := &cli.Filters{}
	cmd := &cobra.Command{
		Annotations: cli.Prints("text", "json"),
		Use:         "fix [PATH...]",
		Short:       "Repair broken OpenCode sessions",
		Long: `Repair what ` + "`sessfix scan`" + ` finds. For each session sessfix plans the edits first, checks them on an
in-memory copy (the fixed findings must go away and nothing new may appear, else the rule's next strategy is
tried), backs every record up, writes under its writer lock, and scans the session again from disk.

On a terminal the plan is shown and sessfix asks before writing (--yes skips the question). Without a
terminal it writes only with --yes; otherwise it prints the plan, like --dry-run, and says so on stderr.
--dry-run --diff prints a unified diff of every record that would change. A session OpenCode may still be
writing is skipped unless --force (a dry run shows its plan, marked): its newest assistant message is
unfinished and it changed within --settle, or OpenCode has the store open and it changed within --abandon.
A finished or failed turn is repaired at once, and an export file is never in use (docs/fixing.md).
A PATH that is not a store, or a store that cannot be read or written, does not stop the others: they are
fixed, and fix exits 3.

The plan, or the diff, goes to stdout or --output FILE. --format json prints one document of what the run
planned and wrote (docs/json-output.md); fix prints text or json, the CI formats are scan's.

A damaged database (SF501) is salvaged into a new file swapped in for it, or reindexed when only its indexes
are damaged; an oversized write-ahead log (SF502) is checkpointed; a database of mostly free pages (SF504) is
vacuumed only when asked for with --select SF504 (a plain fix never vacuums): each before the database's sessions, in a
backup run holding its files byte for byte, never while OpenCode has it open. The dry run says what a salvage
would lose. --session repairs no session of a damaged database (that store fails, exit 3): fix the database
first, without --session.

--error TEXT repairs what a provider error points at (its messages.N, mapped to the exact stored message);
it needs --session (without it, fix names the sessions that store the error as their failed attempt and
prints the command for each; it never picks one itself). Without --error, a stored failed attempt (SF302)
gets the same repair.
Strategies per rule and what each mutation writes: docs/fixing.md. Undo with ` + "`sessfix undo`" + `.

Exit codes:
  0    nothing to fix, or everything planned was fixed
  1    findings remain unfixed, or a dry run would change something
  2    usage error
  3    a store could not be read or written, or verification failed
  4    a store is locked by another sessfix, or a database to repair is open in another program
  129  stopped by SIGHUP
  130  interrupted (Ctrl-C)
  143  stopped by SIGTERM`,
		Example: `  # see what would change, as a diff
  sessfix fix --dry-run --diff

  # fix one session without asking
  sessfix fix --session ses_3a1f2b9c8d7eAbCdEfGhIjKlMn --yes

  # fix only thinking-order findings, stripping instead of moving
  sessfix fix --select SF103 --strategy SF103=strip

  # give a database's free pages back to the disk (VACUUM, with OpenCode closed)
  sessfix fix --select SF504 --yes

  # repair what a provider error points at
  sessfix fix --session ses_3a1f2b9c8d7eAbCdEfGhIjKlMn \
    --error 'messages.3.content.0.type: Expected ` + "`thinking`" + ` or ` + "`redacted_thinking`" + `, but found ` + "`tool_use`" + `'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			cfg, err := f.ApplyConfig(cmd, cli.ConfigTargets{Filters: filters, Settle: &opts.Settle,
				Strategies: &opts.Strategies, Placeholder: &opts.Placeholder})
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
			return RunFix(cmd.Context(), opts)
		},
	}
	cli.AddFilterFlags(cmd, filters, "fix")
	fl := cmd.Flags()
	fl.StringArrayVar(&opts.Sessions, "session", nil, "fix only the session with this `ID` (repeatable)")
	fl.BoolVarP(&opts.DryRun, "dry-run", "n", false, "plan and print, write nothing")
	fl.BoolVar(&opts.Diff, "diff", false, "print a unified diff of every record that would change (with --dry-run)")
	fl.BoolVarP(&opts.Yes, "yes", "y", false, "write without asking")
	fl.BoolVar(&opts.Force, "force", false, "also fix sessions OpenCode may still be writing (see --settle and --abandon)")
	fl.StringArrayVar(&opts.Strategies, "strategy", nil, "repair `CODE=NAME`, e.g. SF103=strip (repeatable; see docs/fixing.md)")
	fl.StringVar(&opts.Placeholder, "placeholder", fix.DefaultPlaceholder, "`TEXT` for empty and injected text parts (must not be blank)")
	fl.StringVar(&opts.Error, "error", "", "repair what this provider error `TEXT` points at (needs --session)")
	cli.AddSettleFlags(cmd, &opts.Settle, &opts.Abandon)
	_ = cmd.RegisterFlagCompletionFunc("session", f.SessionIDs)
	_ = cmd.RegisterFlagCompletionFunc("strategy", cli.StrategyPairs)
	return cmd
}
