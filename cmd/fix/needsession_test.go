package fix

import (
	"errors"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/internal/opencodetest/storegen"
	"github.com/sessfix/sessfix/pkg/store"
)

// TestFixErrorSearchShowsProgress: --error without --session reads every
// session for the ones storing the error; a search that outlasts the
// progress delay shows the counter on a terminal's stderr, and nothing
// when stderr is not a terminal. The usage error comes either way.
func TestFixErrorSearchShowsProgress(t *testing.T) {
	path, _, err := storegen.Generate(store.ShapeSessions, t.TempDir(), storegen.Config{
		Sessions: 2, Messages: 4, Parts: 4, ToolOutput: 100, DefectRate: -1, Seed: 5,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tty := range []bool{true, false} {
		e := newEnv(path)
		e.opts.Error = "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`"
		e.opts.Factory.IOStreams.SetStderrTTY(tty)
		e.opts.Factory.Open = openSlowly
		var usage *cli.FlagError
		if err := e.run(t); !errors.As(err, &usage) {
			t.Fatalf("want the usage error, got %v", err)
		}
		if got := strings.Contains(e.errOut.String(), "searching"); got != tty {
			t.Errorf("stderr a terminal: %v; progress shown: %v\n%q", tty, got, e.errOut)
		}
	}
}
