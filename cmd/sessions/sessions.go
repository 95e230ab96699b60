package sessions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/pkg/report"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/surgery"
)

// SessionsOptions are the parsed inputs of `sessfix sessions`.
type SessionsOptions struct {
	Factory *cli.Factory
	// Paths are the stores named on the command line; empty means discover.
	Paths []string
	// Settle and Abandon are the settle policy's windows (--settle,
	// --abandon): a session OpenCode may still be writing is busy.
	Settle, Abandon time.Duration
	// Limit shows only the newest sessions (0: all).
	Limit int
}

// NewCmdSessions returns `sessfix sessions`. runF replaces the command's
// work in tests.
func NewCmdSessions(f *cli.Factory, runF func(context.Context, *SessionsOptions) error) *cobra.Command {
	opts := &SessionsOptions{Factory: f}
	cmd := &cobra.Command{
		Use:         "sessions [PATH...]",
		Annotations: cli.Prints("text", "json"),
		Short:       "List sessions with their health, newest first",
		Long: `List the sessions of OpenCode's stores, newest first: id, when OpenCode last wrote to it, how many
messages it has, its health, the model its next prompt goes to, its directory and its title.

Health is "clean", the findings of ` + "`sessfix scan`" + ` by severity ("errors 2E 1W"), "busy" when a record changed
within the --settle window (OpenCode may still be writing it: drop, rewind and fork leave it alone), or
"unreadable". Stores are named as PATH arguments or with --store PATH, as in show, drop, rewind and fork.
With no PATH, sessfix looks where OpenCode keeps its data, as scan does.

On a terminal the list is a table (with a STORE column when the sessions come from several stores); piped,
each session is one tab-separated line: id, last activity (RFC 3339), messages, health, provider/model,
directory, store, title. --format json prints one document
(docs/json-output.md). Session ids complete in the shell from this list.

Exit codes:
  0    the sessions were listed
  2    usage error
  3    no store found, or a named path or a store could not be read (the others are still listed; with
       --format json the document names each, with its error, even when none could be read)
  129  stopped by SIGHUP
  130  interrupted (Ctrl-C)
  143  stopped by SIGTERM`,
		Example: `  # every session of the current user, newest first
  sessfix sessions

  # the ten newest, of one database
  sessfix sessions --limit 10 ~/.local/share/opencode/opencode.db

  # ids of the sessions with errors, for a script
  sessfix sessions --format json | jq -r '.sessions[] | select(.health.errors > 0) | .id'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			// --store is show's, drop's and rewind's way to name a
			// store; taken here too, so the habit works.
			opts.Paths = append(opts.Paths, args...)
			if opts.Limit < 0 {
				return cli.FlagErrorf("invalid --limit %d: must not be negative", opts.Limit)
			}
			if _, err := f.ApplyConfig(cmd, cli.ConfigTargets{Settle: &opts.Settle}); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunSessions(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	cli.AddSettleFlags(cmd, &opts.Settle, &opts.Abandon)
	fl.IntVarP(&opts.Limit, "limit", "L", 0, "list only the `N` newest sessions")
	cli.AddStoreFlag(cmd, &opts.Paths)
	return cmd
}

// RunSessions does the work of `sessfix sessions`.
func RunSessions(ctx context.Context, opts *SessionsOptions) error {
	f := opts.Factory
	format := f.Format()
	now := f.Clock()
	sopts := &scan.Options{OpenCode: f.OpenCode()}
	if err := cli.SetSettle(sopts, opts.Settle, opts.Abandon); err != nil {
		return err
	}
	disc, err := f.OpenStores("sessions", opts.Paths)
	if err != nil {
		if format != "json" {
			return err
		}
		// No input could be opened: the document still names each.
		l := &surgery.Listing{}
		for _, in := range cli.FailedInputs(err) {
			l.Stores = append(l.Stores, surgery.StoreStatus{Info: store.Info{Path: in.Path}, Err: in.Err})
		}
		return errors.Join(err, printList(f, l, now))
	}
	defer disc.Close()
	prog := f.IOStreams.StartProgress("reading", "sessions")
	sopts.Now, sopts.Progress = now, prog.Update
	l, err := surgery.List(ctx, disc.Stores, surgery.ListOptions{Scan: sopts})
	prog.Stop()
	if err != nil {
		return err
	}
	if opts.Limit > 0 && len(l.Sessions) > opts.Limit {
		l.Sessions = l.Sessions[:opts.Limit]
	}
	for _, in := range disc.Failed {
		// Named inputs that could not be opened while others could: in
		// the document too, never dropped.
		l.Stores = append(l.Stores, surgery.StoreStatus{Info: store.Info{Path: in.Path}, Err: in.Err})
	}
	if err := printList(f, l, now); err != nil {
		return err
	}
	var errs []error
	if err := cli.InputsFailed("sessions", disc); err != nil {
		errs = append(errs, err)
	}
	for _, st := range l.Stores {
		if st.Err != nil && st.Info.Shape != "" {
			errs = append(errs, fmt.Errorf("cannot list the sessions of %s store %s: %w", st.Info.Shape, st.Info.Path, st.Err))
		}
	}
	if len(errs) == 0 && len(l.Sessions) == 0 && format == "text" {
		f.IOStreams.Statusf("no sessions in %s", storeNames(l))
	}
	return errors.Join(errs...)
}

// printList writes the list, as a table or lines or its JSON document, to
// stdout or --output.
func printList(f *cli.Factory, l *surgery.Listing, now func() time.Time) error {
	out, err := f.OpenOutput()
	if err != nil {
		return err
	}
	if f.Format() == "json" {
		err = report.WriteJSON(out.W, NewSessionsDocument(f.Build.Version, l))
	} else {
		err = WriteSessions(out.W, l.Sessions, out.TTY, out.Color, now())
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

func storeNames(l *surgery.Listing) string {
	s := ""
	for i, st := range l.Stores {
		if i > 0 {
			s += ", "
		}
		s += string(st.Info.Shape) + " store " + st.Info.Path
	}
	return s
}
