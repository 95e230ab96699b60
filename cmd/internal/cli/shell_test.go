package cli

import (
	"os/exec"
	"testing"
)

// TestCommandLineIsWhatAShellRuns: every argument comes back from sh -c
// exactly as given.
func TestCommandLineIsWhatAShellRuns(t *testing.T) {
	args := []string{"fix", "--session", "ses_1d9d", "--error", "messages.3: Expected `thinking`, found 'tool_use' $HOME *", "my store/opencode.db", "~x", ""}
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
}
