package drop

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

// DropOptions are the parsed inputs of `sessfix drop`.
type DropOptions struct {
	cut.Options
	// Messages and Parts are the ids (or unique prefixes) to remove.
	Messages, Parts []string
	// KeepReplies keeps the assistant replies of a dropped user message.
	KeepReplies bool
}

// NewCmdDrop returns `sessfix drop`. runF replaces the command's work in
// tests.
func NewCmdDrop(f *cli.Factory, runF func(context.Context, *DropOptions) error) *cobra.Command {
	opts := &DropOptions{Options: cut.Options{Factory: f, Verb: "drop"}}
	cmd := &cobra.Command{
		Use:         "drop SESSION [MSG...] [--part PART]... [--store PATH]...",
		Annotations: cli.Prints("text", "json"),
		Short:       "Remove messages or parts from a session",
		Long: `Remove messages or parts from one session, with everything that depends on them: a dropped message
takes its parts along, and a dropped user message its assistant replies, unless --keep-replies (then they
answer the closest earlier user message that stays). A cut that would leave the session broken (a message
without parts, an answer the provider rejects, a pending /undo or a compaction pointing at what goes, an empty
session) is refused, with the reason.

The cut runs through the same pipeline as sessfix fix: the store's writer lock, a session OpenCode
may still be writing left alone (the settle policy of sessfix fix; --force cuts it anyway, loudly), the plan (--dry-run, with
--diff every record), a question on a terminal (--yes answers it), one backup run, an atomic write (one
transaction for a database) and a read-back. sessfix undo RUN puts every byte back.

SESSION, MSG and PART are ids or prefixes naming one; they complete in the shell (sessfix sessions, sessfix
show). Without --store, sessfix looks where OpenCode keeps its data. See docs/surgery.md.

` + cut.ExitCodes,
		Example: `  # drop a user message and its replies (sessfix show lists the messages)
  sessfix drop ses_3a1f msg_1fed62645001

  # see first what goes, every record of it
  sessfix drop ses_3a1f msg_1fed62645001 --dry-run --diff

  # drop one part (a runaway tool output), in a script
  sessfix drop ses_3a1f --part prt_1fed57599001 --yes

  # drop a user message but keep what the model answered
  sessfix drop ses_3a1f msg_1fed62645001 --keep-replies`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cli.WithHints(cli.FlagErrorf("drop needs a session id"), cli.ListSessions(opts.Paths))
			}
			if err := cli.SessionArg("drop", args[0], opts.Paths); err != nil {
				return err
			}
			if err := cli.StorePathArgs(cmd, args); err != nil {
				return err
			}
			if len(args) == 1 && len(opts.Parts) == 0 {
				return cli.WithHints(cli.FlagErrorf("drop needs messages to remove, or --part PART"), "list the messages with `"+cli.ShowCommand(args[0], opts.Paths)+"`")
			}
			return nil
		},
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return f.SessionIDs(cmd, nil, toComplete)
			}
			return f.MessageIDs(cmd, args, toComplete)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Session, opts.Messages = args[0], args[1:]
			if _, err := f.ApplyConfig(cmd, cli.ConfigTargets{Settle: &opts.Settle}); err != nil {
				return err
			}
			opts.Command = append([]string{"drop"}, args...)
			for _, p := range opts.Parts {
				opts.Command = append(opts.Command, "--part", p)
			}
			if opts.KeepReplies {
				opts.Command = append(opts.Command, "--keep-replies")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunDrop(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringSliceVar(&opts.Parts, "part", nil, "remove this `PART` (repeatable)")
	cmd.Flags().BoolVar(&opts.KeepReplies, "keep-replies", false, "keep the assistant replies of a dropped user message")
	_ = cmd.RegisterFlagCompletionFunc("part", func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return f.PartIDs(cmd, args, toComplete)
	})
	cut.AddFlags(cmd, &opts.Options)
	return cmd
}

// RunDrop does the work of `sessfix drop`.
func RunDrop(ctx context.Context, opts *DropOptions) error {
	return cut.Run(ctx, &opts.Options, func(s *store.Session, so *scan.Options) (*fix.SessionPlan, error) {
		return surgery.PlanDrop(s, opts.Messages, opts.Parts, surgery.CutOptions{KeepReplies: opts.KeepReplies, Scan: so})
	})
}
