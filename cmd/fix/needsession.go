package fix

import (
	"context"
	"fmt"

	"github.com/sessfix/sessfix/cmd/internal/cli"
)

// errNeedsSession is the usage error of --error without one --session.
var errNeedsSession = cli.FlagErrorf("--error needs exactly one --session: the error's messages.N only means something in the session it came from")

// needsSession is the usage error of --error without --session. Its hints
// are the command for each session whose stored failed attempt carries
// the error, runnable as printed, when the stores can be read and some
// session stores it; else where to find the session ids. It reads the
// stores only: fix never picks the session a repair writes to by itself.
func needsSession(ctx context.Context, opts *FixOptions) error {
	fallback := cli.WithHints(errNeedsSession, cli.ListSessions(opts.Paths), cli.ErrorTemplate("fix", opts.Error, opts.Paths))
	disc, err := opts.Factory.OpenStores("fix", opts.Paths)
	if err != nil {
		return fallback
	}
	defer disc.Close()
	prog := opts.Factory.IOStreams.StartProgress("searching", "sessions")
	hits, err := cli.SessionsStoring(ctx, disc.Stores, opts.Error, prog.Update)
	prog.Stop()
	if err != nil || len(hits) == 0 {
		return fallback
	}
	return cli.WithHints(fmt.Errorf("%w; the error is stored as the failed attempt of %s", errNeedsSession, cli.StoredErrorsText(hits)),
		cli.ErrorCommands("fix", opts.Error, hits)...)
}
