package cli

import (
	"os/exec"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
)

// TestCommandLineIsWhatAShellRuns: every argument comes back from sh -c
// exactly as given.
func TestCommandLineIsWhatAShellRuns(t *testing.T) {
	args := []string{"fix", "--session", "ses_1d9d", "--error", "messages.3: Expected `thinking`, found 'tool_use' $HOME *", "my store/opencode.db", "backups/50%.db", "~x", ""}
	line := CommandLine(args...)
	out, err := exec.Command("sh", "-c", `set -- `+line[len("sessfix "):]+`; for a in "$@"; do printf '%s|' "$a"; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	for _, a := range args {
		want += a + "|"
	}
	if string(out) != want {
		t.Errorf("%s\nruns with\n%q\nwant\n%q", line, out, want)
	}
	if got := CommandLine("scan", "demo/sessions"); got != "sessfix scan demo/sessions" {
		t.Errorf("plain words are quoted: %s", got)
	}
	// A hint quotes a path as the store's notes do (store.ShellArg).
	for _, p := range []string{"backups/50%.db", "my store/opencode.db", "it's.db"} {
		if got, want := CommandLine("scan", p), "sessfix scan "+store.ShellArg(p); got != want {
			t.Errorf("CommandLine quotes %q as %s, the store's notes as %s", p, got, want)
		}
	}
}
