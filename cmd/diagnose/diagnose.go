package diagnose

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/surgery"
)

// DiagnoseOptions are the parsed inputs of `sessfix diagnose`.
type DiagnoseOptions struct {
	Factory *cli.Factory
	Paths   []string
	// Error is the provider's error text.
	Error string
	// Session names the session; empty means the one whose stored failed
	// attempt carries the error.
	Session string
	// Settle and Abandon are the settle policy's windows.
	Settle, Abandon time.Duration
}

// NewCmdDiagnose returns `sessfix diagnose`. runF replaces the work in tests.
func NewCmdDiagnose(f *cli.Factory, runF func(context.Context, *DiagnoseOptions) error) *cobra.Command {
	opts := &DiagnoseOptions{Factory: f}
	cmd := &cobra.Command{
		Annotations: cli.Prints("text", "json"),
		Use:         "diagnose --error TEXT [--session ID] [PATH...]",
		Short:       "Map a provider error to the stored message and part it points at",
		Long: `Classify a provider error (as OpenCode shows it, or as the provider returned it), map the index or
item id it names to the exact stored message and part, and print what is wrong there and the repair
` + "`sessfix fix --error`" + ` would apply (a dry run: nothing is written).

Every provider family OpenCode talks to is understood: Anthropic and Bedrock (messages.N.content.M),
DeepSeek and Kimi ("at message index N", "at index N"), the OpenAI Responses API (item ids rs_…, msg_…,
fc_…, call_…, which map to the part that stores the id, never by position) and Gemini.

Without --session, the session is the one whose stored failed attempt carries the error text; when no
session stores it, diagnose says what it reads the text as (as its error type line does) and asks for --session;
when several do (a fork, a copy of the store), it names them and prints the command for each.

An error that names no message ("messages: text content blocks must contain non-whitespace text") is
mapped through the preflight to the places in the session that produce it, and those are what
` + "`sessfix fix --error`" + ` repairs. For errors whose cause every message may share (DeepSeek's
"reasoning_content ... must be passed back", encrypted reasoning of another account, Gemini's
"Corrupted thought signature."), the messages that show it are listed and all of them are repaired.

Exit codes:
  0    the error points at nothing sessfix can repair
  1    a repair is planned, or warnings or errors remain where the error points
  2    usage error
  3    a store could not be read`,
		Example: `  sessfix diagnose --error 'messages.3.content.0.type: Expected ` + "`thinking`" + ` or ` + "`redacted_thinking`" + `, but found ` + "`tool_use`" + `'
  sessfix diagnose --error 'The ` + "`reasoning_content`" + ` in the thinking mode must be passed back to the API.'
  sessfix diagnose --error "Item 'rs_0a1b2c3d' of type 'reasoning' was provided without its required following item."
  sessfix diagnose --session ses_3a1f2b9c8d7eAbCdEfGhIjKlMn --error "$(pbpaste)" --format json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			if strings.TrimSpace(opts.Error) == "" {
				return cli.WithHints(cli.FlagErrorf("diagnose needs the provider's error text in --error"),
					"copy the error OpenCode shows, then: sessfix diagnose --error 'TEXT'")
			}
			if _, err := f.ApplyConfig(cmd, cli.ConfigTargets{Settle: &opts.Settle}); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunDiagnose(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Error, "error", "", "the provider error `TEXT` to diagnose")
	fl.StringVar(&opts.Session, "session", "", "the session `ID` the error came from (or a prefix naming one)")
	cli.AddSettleFlags(cmd, &opts.Settle, &opts.Abandon)
	_ = cmd.RegisterFlagCompletionFunc("session", f.SessionIDs)
	return cmd
}

// Result is what `sessfix diagnose --format json` prints.
type Result struct {
	Store string `json:"store"`
	*scan.Diagnosis
	// Fix is what `sessfix fix --error` would do.
	Fix FixPreview `json:"fix"`
}

// FixPreview is the dry-run plan of `sessfix fix --error`.
type FixPreview struct {
	Command string   `json:"command"`
	Edits   []string `json:"edits"`
	Notes   []string `json:"notes"`
	Unfixed []string `json:"unfixed"`
}

// RunDiagnose does the work of `sessfix diagnose`.
func RunDiagnose(ctx context.Context, opts *DiagnoseOptions) error {
	f := opts.Factory
	format := f.Format()
	now := f.Clock()
	sopts := &scan.Options{Now: now, OpenCode: f.OpenCode()}
	if err := cli.SetSettle(sopts, opts.Settle, opts.Abandon); err != nil {
		return err
	}
	// A command the hints suggest repeats --error (diagnose needs it) and
	// --session.
	words := []string{"diagnose", "--error", opts.Error}
	if opts.Session != "" {
		words = append(words, "--session", opts.Session)
	}
	verb := cli.Verb(words...)
	disc, err := f.OpenStores(verb, opts.Paths)
	if err != nil {
		return err
	}
	defer disc.Close()
	if err := cli.InputsFailed(verb, disc); err != nil {
		return err
	}

	s, info, err := findSession(ctx, disc.Stores, opts, verb)
	if err != nil {
		return err
	}
	sopts.Activity = opencode.StoreActivity(disc.Stores)
	res := &Result{Store: info.Path, Diagnosis: scan.Diagnose(s, opts.Error, sopts)}
	plan, err := fix.PlanFromError(s, opts.Error, fix.Options{Now: now, Scan: sopts})
	if err != nil {
		return fmt.Errorf("session %s in %s: %w", s.ID, info.Path, err)
	}
	var where []string
	if len(opts.Paths) > 0 {
		// The command must fix the store diagnose read, not the
		// user's own: name it when the user named stores.
		where = []string{info.Path}
	}
	res.Fix = preview(s.ID, opts.Error, where, plan)

	out, err := f.OpenOutput()
	if err != nil {
		return err
	}
	if format == "json" {
		enc := json.NewEncoder(out.W)
		enc.SetIndent("", "  ")
		err = enc.Encode(res)
	} else {
		err = printText(out.W, res)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if len(res.Fix.Edits) > 0 || len(res.Causes) > 0 || len(res.Shows) > 0 || slices.ContainsFunc(res.Findings, func(f scan.Finding) bool { return f.Severity >= scan.Warning }) {
		return cli.ErrFindings
	}
	return nil
}

// findSession loads the named session, or the one whose stored failed
// attempt carries the error. verb is the command its hints repeat.
func findSession(ctx context.Context, stores []store.Store, opts *DiagnoseOptions, verb string) (*store.Session, store.Info, error) {
	if opts.Session != "" {
		// An id or a prefix naming one session, as show, drop and
		// rewind take it.
		found, err := surgery.Find(ctx, stores, opts.Session)
		if err != nil {
			return nil, store.Info{}, cli.SessionError(err, verb, opts.Paths)
		}
		s, err := found.Store.Load(ctx, found.Ref)
		if err != nil {
			return nil, store.Info{}, fmt.Errorf("session %s in %s cannot be loaded: %w", found.Ref.ID, found.Store.Info().Path, err)
		}
		return s, found.Store.Info(), nil
	}
	prog := opts.Factory.IOStreams.StartProgress("searching", "sessions")
	hits, err := cli.SessionsStoring(ctx, stores, opts.Error, prog.Update)
	prog.Stop()
	if err != nil {
		return nil, store.Info{}, err
	}
	switch {
	case len(hits) == 1:
		return hits[0].Session, hits[0].Store, nil
	case len(hits) == 0:
		// What the text is needs no session: say it, so that a user
		// who pasted an error to learn what it means learns it here.
		what := "this error"
		if t, rules := opencode.DetectErrorType(opts.Error), scan.MarkedRules(opts.Error); t != opencode.ErrorNone || len(rules) > 0 {
			what = fmt.Sprintf("this error (error type: %s)", typeLine(t, rules))
		}
		return nil, store.Info{}, cli.WithHints(cli.FlagErrorf("no session stores a failed attempt with %s; name the session with --session", what),
			cli.ListSessions(opts.Paths), cli.ErrorTemplate("diagnose", opts.Error, opts.Paths))
	}
	return nil, store.Info{}, cli.WithHints(cli.FlagErrorf("%d sessions store a failed attempt with this error (%s); name one with --session", len(hits), cli.StoredErrorsText(hits)),
		cli.ErrorCommands("diagnose", opts.Error, hits)...)
}
