package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/cmd/internal/iostreams"
)

// TestNotWrittenSaysWhyItDidNotAsk: with no --yes and no question asked,
// the error says why. With stdin a terminal and stdout a file (`sessfix
// fix > plan.txt`), "no terminal to ask on" would be false: the plan went
// to the file, so the user would answer without having seen it.
func TestNotWrittenSaysWhyItDidNotAsk(t *testing.T) {
	for _, c := range []struct {
		stdin, stdout bool
		want          string
	}{
		{false, false, "not written: no terminal to ask on; add --yes to write the 3 edits"},
		{true, false, "not written: the plan went to a file or pipe, so sessfix did not ask; add --yes to write the 3 edits"},
		{false, true, "not written: no terminal to ask on; add --yes to write the 3 edits"},
	} {
		ios, _, _, _ := iostreams.Test()
		ios.SetStdinTTY(c.stdin)
		ios.SetStdoutTTY(c.stdout)
		p := &StubPrompter{Terminal: ios.CanPrompt()}
		mode := DecideWrite(p, false, false)
		if mode != WriteNoTerminal {
			t.Fatalf("stdin tty %v, stdout tty %v: mode %v, want WriteNoTerminal", c.stdin, c.stdout, mode)
		}
		err := ConfirmWrite(context.Background(), ios, p, mode, "3 edits")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("stdin tty %v, stdout tty %v: %v, want %q", c.stdin, c.stdout, err, c.want)
		}
	}
}
