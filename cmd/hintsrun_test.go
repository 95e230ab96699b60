package cmd

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// suggested are the sessfix command lines the hint lines of stderr tell the
// user to run: quoted in backticks, or after "pass a path: ", "e.g. " or "run: ".
// A template with a word for the user to fill in (SESSION, TEXT) is not a
// command to run as printed, and is left out.
func suggested(stderr string) []string {
	var out []string
	template := regexp.MustCompile(`\b[A-Z]{2,}\b`)
	for _, line := range strings.Split(stderr, "\n") {
		if !strings.HasPrefix(line, "hint: ") {
			continue
		}
		var found []string
		for _, m := range regexp.MustCompile("`(sessfix [^`]*)`").FindAllStringSubmatch(line, -1) {
			found = append(found, m[1])
		}
		for _, lead := range []string{"pass a path: ", "e.g. ", "run: "} {
			if _, after, ok := strings.Cut(line, lead); ok && strings.HasPrefix(after, "sessfix ") {
				found = append(found, after)
			}
		}
		for _, c := range found {
			if !template.MatchString(strings.ReplaceAll(c, "'", "")) {
				out = append(out, c)
			}
		}
	}
	return out
}

// sh runs a command line as a user pastes it into a shell, in dir, with
// the sessfix under test first on PATH, and returns its exit code and
// stderr.
func sh(t *testing.T, exe, dir string, env []string, line string) (int, string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append(env, "PATH="+filepath.Dir(exe)+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, stderr.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), stderr.String()
	}
	t.Fatal(err)
	return -1, ""
}

// TestSuggestedCommandsRun: a command a hint suggests runs as printed. For
// each situation below, sessfix is run as a user runs it; every sessfix
// command its hints name is then pasted into a shell in the same place:
// it must not be a usage error (exit 2) nor fail on the paths it names.
func TestSuggestedCommandsRun(t *testing.T) {
	exe := sessfixExe(t)
	dir := t.TempDir()
	b, err := os.ReadFile(broken)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"good", "good2", "two words"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, d, "broken.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// OpenCode's data dir where XDG_DATA_HOME does not point: discovery
	// finds nothing, and the hint names ~/.local/share/opencode.
	fixtures, err := filepath.Abs("../testdata/sessions")
	if err != nil {
		t.Fatal(err)
	}
	db := storetest.MaterializeCases(t, store.ShapeSQLite, fixtures, time.Now().Add(-time.Hour), "sf302-failed-attempt")
	data := filepath.Join(dir, ".local", "share", "opencode")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, db, filepath.Join(data, "opencode.db"))
	// Two copies of it: two sessions store the same failed attempt.
	copyFile(t, db, filepath.Join(dir, "a.db"))
	copyFile(t, db, filepath.Join(dir, "b.db"))
	st := storetest.OpenOne(t, db)
	s := storetest.LoadAll(t, st)[0]
	st.Close()
	first, last := s.Messages[0].ID, s.Messages[len(s.Messages)-1].ID
	oc2, err := os.ReadFile(filepath.Join("..", "testdata", "opencode2", "after-import", "opencode.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "oc2.db"), oc2, 0o644); err != nil {
		t.Fatal(err)
	}
	storetest.ExecSQL(t, filepath.Join(dir, "oc2.db"), `UPDATE part SET data = json_set(data, '$.text', ' ') WHERE id = 'prt_20958dcb6001AfterImport29N'`)
	env := []string{"HOME=" + dir, "XDG_DATA_HOME=" + filepath.Join(dir, "elsewhere"), "XDG_STATE_HOME=", "SESSFIX_STATE_DIR=" + filepath.Join(dir, "state")}
	const apiError = "messages.3.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`"

	for _, c := range []struct {
		args []string
		// fix is how many `sessfix fix` commands the hints suggest, and
		// hints how many commands in all.
		fix, hints int
	}{
		{[]string{"scan", "good", "/no/such", "good2"}, 1, 3},
		{[]string{"scan", "oc2.db", "good"}, 1, 2},
		{[]string{"scan", "oc2.db"}, 0, 1},
		{[]string{"fix", "oc2.db"}, 0, 0},
		{[]string{"diagnose", "--error", apiError}, 0, 1},
		{[]string{"scan"}, 0, 1},
		{[]string{"fix", "/no/such"}, 1, 1},
		{[]string{"drop", "ses_33c1", "--store", "good/broken.json"}, 0, 1},
		// A session in two stores: the command again, one store named.
		{[]string{"show", "ses_33c1", "--store", "two words", "--store", "good"}, 0, 1},
		{[]string{"drop", "ses_33c1", "msg_cc3e0a5d9000o4Z8YH3gBXEHXq", "--store", "two words", "--store", "good"}, 0, 1},
		{[]string{"diagnose", "--error", apiError, "--session", "ses_33c1", "two words", "good"}, 0, 1},
		// A session id no store holds: the list of sessions is that of
		// the stores read, not of the discovered ones nor of a path
		// that failed.
		{[]string{"scan", "good", "/no/such", "--session", "ses_nope"}, 0, 1},
		{[]string{"fix", "good", "--session", "ses_nope"}, 0, 1},
		{[]string{"show", "ses_nope", "--store", "good/broken.json"}, 0, 1},
		{[]string{"drop", "--store", "good/broken.json"}, 0, 1},
		{[]string{"diagnose", "good", "--error", apiError}, 0, 1},
		// Two sessions store the error: the command again for each.
		{[]string{"diagnose", "--error", apiError, "a.db", "b.db"}, 0, 2},
		{[]string{"fix", "--error", apiError, "a.db", "b.db"}, 2, 2},
		{[]string{"fix", "--error", apiError, "a.db"}, 1, 1},
		{[]string{"fix", "--error", apiError, "--session", s.ID, "--session", s.ID[:12], "a.db"}, 2, 2},
		// No store found: the surgery commands repeat their arguments
		// with --store.
		{[]string{"show", s.ID[:12]}, 0, 1},
		{[]string{"drop", s.ID, last}, 0, 1},
		{[]string{"rewind", s.ID, "--to", first}, 0, 1},
		{[]string{"fork", s.ID}, 0, 1},
		// --diff without --dry-run: the user's line with --dry-run.
		{[]string{"fix", "two words", "--diff"}, 1, 1},
		{[]string{"rewind", s.ID, "--to", first, "--store", "a.db", "--diff"}, 0, 1},
		// A run that fixed some stores and failed for another: the
		// command that reverts what it wrote (one run, then two), and
		// the advice for the path that is no store.
		{[]string{"fix", "--yes", "good2", "/no/such"}, 1, 2},
		{[]string{"fix", "--yes", "good", "two words", "/no/such"}, 1, 2},
	} {
		line := "sessfix"
		for _, a := range c.args {
			line += " '" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		code, stderr := sh(t, exe, dir, env, line)
		cmds := suggested(stderr)
		fixes := 0
		for _, s := range cmds {
			if strings.HasPrefix(s, "sessfix fix ") {
				fixes++
			}
		}
		if len(cmds) != c.hints || fixes != c.fix {
			t.Errorf("%v (exit %d) suggests %q, want %d commands, %d of them fix:\n%s", c.args, code, cmds, c.hints, c.fix, stderr)
		}
		for _, s := range cmds {
			got, out := sh(t, exe, dir, env, s)
			if got == ExitUsage || strings.Contains(out, "does not exist") || strings.Contains(out, "no opencode store found") ||
				strings.Contains(out, "never writes it") || strings.HasPrefix(s, "sessfix undo ") && got != 0 {
				t.Errorf("%v suggests `%s`, which fails as printed (exit %d):\n%s", c.args, s, got, out)
			}
		}
	}
	// The undo commands the failed fixes suggested put back every byte.
	for _, d := range []string{"good", "good2", "two words"} {
		if got, err := os.ReadFile(filepath.Join(dir, d, "broken.json")); err != nil || string(got) != string(b) {
			t.Errorf("%s/broken.json is not what it was before the fixes their hints undo (%v)", d, err)
		}
	}
}
