package fork

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/cut"
	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/surgery"
)

// ForkOptions are the parsed inputs of `sessfix fork`.
type ForkOptions struct {
	cut.Options
	// To is the last message copied (an id or unique prefix); empty copies
	// the whole history.
	To string
	// Title is the new session's title; empty means "TITLE (fork #N)".
	Title string
}

// NewCmdFork returns `sessfix fork`. runF replaces the command's work in
// tests.
func NewCmdFork(f *cli.Factory, runF func(context.Context, *ForkOptions) error) *cobra.Command {
	opts := &ForkOptions{Options: cut.Options{Factory: f, Verb: "fork"}}
	cmd := &cobra.Command{
		Use:         "fork SESSION [--to MSG] [--title TITLE] [--store PATH]...",
		Annotations: cli.Prints("text", "json"),
		Short:       "Copy a session's history into a new session",
		Long: `Copy the history of one session, up to and including MSG (all of it without --to), into a new
session of the same store and project, which OpenCode lists with the others: a clean copy to go on from,
while the original stays exactly as it was. --to keeps MSG, as sessfix rewind does (OpenCode's own fork
stops before the message it is given).

The copy gets fresh ids minted as OpenCode mints them (the session's sorts first in OpenCode's list,
messages and parts in the order copied), and every reference is rewritten: the messages' session and
parent, the parts' message and session, a compaction's kept tail. Its title is --title, or the original's
with " (fork #1)" (a fork of a fork counts up), as OpenCode names forks. It keeps the original's project,
directory, agent, model and permissions, and drops what belongs to the original alone: its parent
session, share link, pending revert (/undo), change summary, compaction and archive times; cost and
tokens are the copied messages'. A copy that would bring back messages a pending /undo hides, or end on
an answer the provider rejects, is refused, with the reason. From an export file, the fork is a new
export file next to it (NAME.fork-SESSION.json), never written over an existing one.

The fork runs through the same pipeline as sessfix fix: the store's writer lock, a session OpenCode
may still be writing left alone (--force copies it anyway, loudly), the plan (--dry-run, with --diff
every record), a question on a terminal (--yes answers it), one backup run, an atomic write (one
transaction for a database) and a read-back of the new session. sessfix undo RUN removes the fork and
leaves the store as it was, byte for byte.

SESSION and MSG are ids or prefixes naming one; they complete in the shell. Without --store, sessfix
looks where OpenCode keeps its data. See docs/surgery.md.

` + cut.ExitCodes,
		Example: `  # a copy of the whole session, titled "TITLE (fork #1)"
  sessfix fork ses_3a1f

  # a copy of the history up to msg_1fed57c70001, to try the next turn again
  sessfix fork ses_3a1f --to msg_1fed57c70001 --title "second try"

  # see first every record the copy adds
  sessfix fork ses_3a1f --dry-run --diff

  # from an export file, in a script: writes session.fork-ses_….json
  sessfix fork ses_3a1f --store session.json --yes`,
		Args:              cli.OneSession("fork", "name the last message copied with --to MSG"),
		ValidArgsFunction: f.OneSessionID,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Session = args[0]
			if _, err := f.ApplyConfig(cmd, cli.ConfigTargets{Settle: &opts.Settle}); err != nil {
				return err
			}
			opts.Command = []string{"fork", opts.Session}
			if opts.To != "" {
				opts.Command = append(opts.Command, "--to", opts.To)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunFork(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.To, "to", "", "the last message copied (`MSG`); default: the whole history")
	cmd.Flags().StringVar(&opts.Title, "title", "", "the new session's `TITLE`; default: the original's with \" (fork #1)\"")
	_ = cmd.RegisterFlagCompletionFunc("to", func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return f.MessageIDs(cmd, args, toComplete)
	})
	_ = cmd.RegisterFlagCompletionFunc("title", cobra.NoFileCompletions)
	cut.AddFlags(cmd, &opts.Options)
	return cmd
}

// RunFork does the work of `sessfix fork`.
func RunFork(ctx context.Context, opts *ForkOptions) error {
	f := opts.Factory
	var plan *surgery.ForkPlan
	opts.Written = func(ctx context.Context, o fix.Outcome, run string) error {
		st := o.Store
		if info := plan.Changes.Store; info.Path != st.Info().Path {
			disc, err := shapes.Open([]string{info.Path})
			if err != nil {
				return fmt.Errorf("the new export file cannot be read back: %w", err)
			}
			defer disc.Close()
			st = disc.Stores[0]
		}
		if err := surgery.VerifyFork(ctx, st, plan); err != nil {
			return err
		}
		ios := f.IOStreams
		ios.Statusf("new session %s %q: %s, %s", plan.NewID, plan.Title,
			plural.Count(len(plan.Messages), "message", "messages"), plural.Count(len(plan.Parts), "part", "parts"))
		if st.Info().Shape == store.ShapeExport {
			ios.Statusf("written to %s; import it with: opencode import %s", st.Info().Path, st.Info().Path)
		} else {
			ios.Statusf("open it with: opencode --session %s", plan.NewID)
		}
		return nil
	}
	return cut.Run(ctx, &opts.Options, func(s *store.Session, so *scan.Options) (*fix.SessionPlan, error) {
		p, err := surgery.PlanFork(s, surgery.ForkOptions{To: opts.To, Title: opts.Title, Scan: so, Now: f.Clock()()})
		if err != nil {
			return nil, err
		}
		if err := shapes.CheckWritable(p.Changes.Store); err != nil {
			return nil, err
		}
		plan = p
		return p.SessionPlan, nil
	})
}
