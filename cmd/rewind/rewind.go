package rewind

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/cut"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/surgery"
)

// RewindOptions are the parsed inputs of `sessfix rewind`.
type RewindOptions struct {
	cut.Options
	// To is the last message kept (an id or unique prefix).
	To string
}

// NewCmdRewind returns `sessfix rewind`. runF replaces the command's work
// in tests.
func NewCmdRewind(f *cli.Factory, runF func(context.Context, *RewindOptions) error) *cobra.Command {
	opts := &RewindOptions{Options: cut.Options{Factory: f, Verb: "rewind"}}
	cmd := &cobra.Command{
		Use:         "rewind SESSION --to MSG [--store PATH]...",
		Annotations: cli.Prints("text", "json"),
		Short:       "Discard every message of a session after one",
		Long: `Discard every message of one session after MSG, which stays: the cut OpenCode's revert (/undo)
promises, done now and for good, so nothing reverted is sent again or brought back. The messages go with
their parts. A cut that would leave the session broken (a pending /undo or a compaction pointing at what goes,
an answer the provider rejects) is refused, with the reason.

The cut runs through the same pipeline as sessfix fix: the store's writer lock, a session OpenCode
may still be writing left alone (the settle policy of sessfix fix; --force cuts it anyway, loudly), the plan (--dry-run, with
--diff every record), a question on a terminal (--yes answers it), one backup run, an atomic write (one
transaction for a database) and a read-back. sessfix undo RUN puts every byte back.

SESSION and MSG are ids or prefixes naming one; they complete in the shell. Without --store, sessfix looks
where OpenCode keeps its data. See docs/surgery.md.

` + cut.ExitCodes,
		Example: `  # keep everything up to msg_1fed57c70001 (sessfix show lists the messages)
  sessfix rewind ses_3a1f --to msg_1fed57c70001

  # see first what goes, every record of it
  sessfix rewind ses_3a1f --to msg_1fed57c70001 --dry-run --diff

  # in a script, on an export file
  sessfix rewind ses_3a1f --to msg_1fed57c70001 --store session.json --yes

  # the same, with a JSON document of what was written (docs/json-output.md)
  sessfix rewind ses_3a1f --to msg_1fed57c70001 --store session.json --yes --format json`,
		Args:              cli.OneSession("rewind", "name the last message kept with --to MSG"),
		ValidArgsFunction: f.OneSessionID,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Session = args[0]
			if _, err := f.ApplyConfig(cmd, cli.ConfigTargets{Settle: &opts.Settle}); err != nil {
				return err
			}
			opts.Command = []string{"rewind", opts.Session, "--to", opts.To}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunRewind(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.To, "to", "", "the last message kept (`MSG`)")
	_ = cmd.MarkFlagRequired("to")
	_ = cmd.RegisterFlagCompletionFunc("to", func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return f.MessageIDs(cmd, args, toComplete)
	})
	cut.AddFlags(cmd, &opts.Options)
	return cmd
}

// RunRewind does the work of `sessfix rewind`.
func RunRewind(ctx context.Context, opts *RewindOptions) error {
	return cut.Run(ctx, &opts.Options, func(s *store.Session, so *scan.Options) (*fix.SessionPlan, error) {
		return surgery.PlanRewind(s, opts.To, surgery.CutOptions{Scan: so})
	})
}
