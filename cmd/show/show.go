package show

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/pkg/report"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/surgery"
)

// ShowOptions are the parsed inputs of `sessfix show`.
type ShowOptions struct {
	Factory *cli.Factory
	// Session is the session id, or a prefix naming one session.
	Session string
	// Paths are the stores named with --store; empty means discover.
	Paths []string
	// Sent shows the request OpenCode would send instead of the stored
	// history (text output; JSON always has both).
	Sent bool
}

// NewCmdShow returns `sessfix show`. runF replaces the command's work in
// tests.
func NewCmdShow(f *cli.Factory, runF func(context.Context, *ShowOptions) error) *cobra.Command {
	opts := &ShowOptions{Factory: f}
	cmd := &cobra.Command{
		Use:         "show SESSION [--sent] [--store PATH]...",
		Annotations: cli.Prints("text", "json"),
		Short:       "Show a session as stored, or as OpenCode would send it",
		Long: `Show one session's stored history, message by message: position, role, id, model, time, how it
ended (finish reason, error), and every part with its type, state (a tool's status, whether reasoning is
signed, empty text) and size. Messages OpenCode never sends and messages a pending revert (/undo) deletes on
the next prompt are marked.

--sent shows instead the request OpenCode would send with your next prompt, built by the same conversion
the preflight checks (docs/preflight.md): every provider message and content block with its index the way
the provider prints it in its errors (Anthropic and Bedrock: messages.N and messages.N.content.M; OpenAI
Responses: input[N]; Chat Completions: messages[N]; Gemini: contents[N]), each mapped to the stored
message and part it comes from. When a provider answers "messages.3.content.0: ...", this is where to look.

SESSION is a session id or a prefix of one that names a single session. Without --store, sessfix looks
where OpenCode keeps its data, as scan does; --store names a data dir, database, JSON tree or export file. --format json prints both views in one document
(docs/json-output.md).

Exit codes:
  0    the session was shown
  2    usage error, a prefix that names several sessions, or a session found in several stores
  3    no store found, a --store path cannot be read, the session is not in the stores or cannot be read
  129  stopped by SIGHUP
  130  interrupted (Ctrl-C)
  143  stopped by SIGTERM`,
		Example: `  # what is stored
  sessfix show ses_3a1f2b9c8d7eAbCdEfGhIjKlMn

  # what OpenCode sends, to read a provider's "messages.3.content.0" off it
  sessfix show ses_3a1f --sent

  # a session of an export file
  sessfix show ses_3a1f --store session.json

  # the provider message an index names, from JSON
  sessfix show ses_3a1f --format json | jq '.request.messages[3]'`,
		Args:              cli.OneSession("show", "name stores with --store PATH"),
		ValidArgsFunction: f.OneSessionID,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Session = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunShow(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Sent, "sent", false, "show the request OpenCode would send, with each provider index")
	cli.AddStoreFlag(cmd, &opts.Paths)
	return cmd
}

// RunShow does the work of `sessfix show`.
func RunShow(ctx context.Context, opts *ShowOptions) error {
	f := opts.Factory
	format := f.Format()
	verb := cli.Verb("show", opts.Session)
	disc, err := f.OpenStores(verb, opts.Paths)
	if err != nil {
		return err
	}
	defer disc.Close()
	if err := cli.InputsFailed(verb, disc); err != nil {
		return err
	}
	s, _, err := surgery.Load(ctx, disc.Stores, opts.Session)
	if err != nil {
		return cli.SessionError(err, verb, opts.Paths)
	}
	// The request is built in the shape of the family OpenCode talks to,
	// which for a provider the user added only their config says.
	(&scan.Options{OpenCode: f.OpenCode()}).ReadPackages(s)
	v := surgery.Show(s, surgery.ShowOptions{Sent: opts.Sent || format == "json"})
	out, err := f.OpenOutput()
	if err != nil {
		return err
	}
	switch {
	case format == "json":
		err = report.WriteJSON(out.W, NewShowDocument(f.Build.Version, v))
	case opts.Sent:
		err = WriteSent(out.W, v, out.Color)
	default:
		err = WriteSession(out.W, v, out.Color)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
