package cmd

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	"github.com/sessfix/sessfix/pkg/fix"
)

// TestExitCodesDocMatchesTable checks docs/exit-codes.md's table row by row
// against ExitCodes, and that ExitCodes covers every exit code constant.
func TestExitCodesDocMatchesTable(t *testing.T) {
	data, err := os.ReadFile("../docs/exit-codes.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`^\| (\d+) \| (.*) \| (.*) \|$`)
	var got []ExitCodeDoc
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		m := row.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		code, _ := strconv.Atoi(m[1])
		got = append(got, ExitCodeDoc{Code: code, Meaning: strings.TrimSpace(m[2]), Examples: strings.TrimSpace(m[3])})
	}
	if len(got) != len(ExitCodes) {
		t.Fatalf("docs/exit-codes.md has %d rows, ExitCodes %d", len(got), len(ExitCodes))
	}
	for i, want := range ExitCodes {
		if got[i] != want {
			t.Errorf("row %d differs:\ndoc:   %+v\ntable: %+v", i, got[i], want)
		}
	}
	documented := map[int]bool{}
	for _, e := range ExitCodes {
		documented[e.Code] = true
	}
	for _, c := range []int{ExitOK, ExitFindings, ExitUsage, ExitFailure, ExitLocked, ExitHangup, ExitInterrupted, ExitTerminated} {
		if !documented[c] {
			t.Errorf("exit code %d is not in ExitCodes", c)
		}
	}
}

func TestHelpExitCodes(t *testing.T) {
	r := run(t, nil, "help", "exit-codes")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, e := range ExitCodes {
		if !documentsCode(r.stdout, e.Code) || !strings.Contains(r.stdout, plainText(e.Meaning)) {
			t.Errorf("help exit-codes does not explain %d:\n%s", e.Code, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "`") {
		t.Errorf("markdown quotes in terminal output:\n%s", r.stdout)
	}
	// help still shows commands' help, and rejects unknown topics.
	if h := run(t, nil, "help", "scan"); h.code != ExitOK || !strings.Contains(h.stdout, "sessfix scan [PATH...]") {
		t.Errorf("help scan: exit %d\n%s", h.code, h.stdout)
	}
	if h := run(t, nil, "help", "nope"); h.code != ExitUsage || !strings.Contains(h.stderr, `unknown help topic "nope"`) {
		t.Errorf("help nope: exit %d\n%s", h.code, h.stderr)
	}
	if h := run(t, nil, "help"); h.code != ExitOK || !strings.Contains(h.stdout, "Available Commands:") {
		t.Errorf("help: exit %d\n%s", h.code, h.stdout)
	}
}

func TestManPages(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "man")
	set := func(f *cli.Factory, _ *iostreams.IOStreams) {
		f.Build = cli.BuildInfo{Version: "1.2.3", Date: "2026-01-02T03:04:05Z"}
	}
	r := run(t, set, "help", "man", "--dir", dir)
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, name := range []string{"sessfix.1", "sessfix-scan.1", "sessfix-fix.1", "sessfix-explain.1"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("no man page %s: %v", name, err)
		}
	}
	scan, err := os.ReadFile(filepath.Join(dir, "sessfix-scan.1"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(scan)
	for _, want := range []string{`.TH "SESSFIX" "1" "Jan 2026" "sessfix 1.2.3"`, `\fB--fail-on\fP`, `\fB--select\fP`, "Exit codes"} {
		if !strings.Contains(page, want) {
			t.Errorf("sessfix-scan.1 lacks %q", want)
		}
	}
	if strings.Contains(page, "Auto generated") {
		t.Error("man page carries a generation stamp: releases would not be reproducible")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), "-man") || strings.Contains(e.Name(), "help") {
			t.Errorf("hidden or help command got a page: %s", e.Name())
		}
	}
	if r := run(t, nil, "help", "man"); r.code != ExitUsage {
		t.Errorf("help man without --dir: exit %d", r.code)
	}
	// Hidden: not listed in help.
	if h := run(t, nil, "help", "help"); strings.Contains(h.stdout, "man --dir") {
		t.Errorf("the man generator is listed:\n%s", h.stdout)
	}
}

func TestCompletionScripts(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		r := run(t, nil, "completion", sh)
		if r.code != ExitOK || !strings.Contains(r.stdout, "sessfix") || !strings.Contains(r.stdout, "__complete") {
			t.Errorf("completion %s: exit %d, %d bytes", sh, r.code, len(r.stdout))
		}
	}
	// The scripts ask sessfix itself: the command names come from there.
	r := run(t, nil, "__complete", "")
	for _, name := range []string{"scan", "fix", "undo", "backups", "rules", "explain", "version", "completion", "help"} {
		if !regexp.MustCompile(`(?m)^` + name + `\t`).MatchString(r.stdout) {
			t.Errorf("command %s is not completed:\n%s", name, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "man\t") {
		t.Errorf("the hidden man command is completed:\n%s", r.stdout)
	}
	h := run(t, nil, "__complete", "help", "ex")
	if !strings.Contains(h.stdout, "exit-codes\t") || !strings.Contains(h.stdout, "explain\t") {
		t.Errorf("help completion:\n%s", h.stdout)
	}
}

func TestCompleteSessionIDs(t *testing.T) {
	for _, cmd := range []string{"scan", "fix"} {
		r := run(t, nil, "__complete", cmd, broken, "--session", "ses_33")
		if !strings.Contains(r.stdout, "ses_33c1f6ffffffO8I11AapoBFcd9") {
			t.Errorf("%s --session does not complete the store's session:\n%s", cmd, r.stdout)
		}
		r = run(t, nil, "__complete", cmd, broken, "--session", "ses_zz")
		if strings.Contains(r.stdout, "ses_") {
			t.Errorf("%s --session completes ids without the prefix:\n%s", cmd, r.stdout)
		}
	}
	// The surgery commands take the session as their first argument and
	// stores with --store; their message arguments complete from that
	// session, in its order, described by position and role.
	r := run(t, nil, "__complete", "show", "--store", broken, "ses_33")
	if !strings.Contains(r.stdout, "ses_33c1f6ffffffO8I11AapoBFcd9\tinterrupted at text start") {
		t.Errorf("show SESSION does not complete the store's session:\n%s", r.stdout)
	}
	// drop completes messages after the session, and parts after --part;
	// rewind's --to completes messages.
	r = run(t, nil, "__complete", "drop", "--store", broken, "ses_33c1f6ffffffO8I11AapoBFcd9", "msg_cc3e0a")
	if !strings.Contains(r.stdout, "msg_cc3e0a2b90007TIwsFVAjCqUB1\t#2 user") || strings.Contains(r.stdout, "msg_cc3e095dc") {
		t.Errorf("drop SESSION MSG does not complete the session's messages:\n%s", r.stdout)
	}
	r = run(t, nil, "__complete", "drop", "--store", broken, "ses_33c1", "--part", "prt_cc3e0a8")
	if !strings.Contains(r.stdout, "prt_cc3e0a8ec000u3KLeJBKElGQvK\t#3 assistant step-start") {
		t.Errorf("drop --part does not complete the session's parts:\n%s", r.stdout)
	}
	r = run(t, nil, "__complete", "rewind", "--store", broken, "ses_33c1", "--to", "msg_cc3e095")
	if !strings.Contains(r.stdout, "msg_cc3e095dc000v3A4gIsTjuFHSb\t#0 user") {
		t.Errorf("rewind --to does not complete the session's messages:\n%s", r.stdout)
	}
	r = run(t, nil, "__complete", "fork", "--store", broken, "ses_33c1", "--to", "msg_cc3e095")
	if !strings.Contains(r.stdout, "msg_cc3e095dc000v3A4gIsTjuFHSb\t#0 user") {
		t.Errorf("fork --to does not complete the session's messages:\n%s", r.stdout)
	}
	r = run(t, nil, "__complete", "fork", "--store", broken, "ses_33")
	if !strings.Contains(r.stdout, "ses_33c1f6ffffffO8I11AapoBFcd9\tinterrupted at text start") {
		t.Errorf("fork SESSION does not complete the store's session:\n%s", r.stdout)
	}
	// Newest first, as `sessfix sessions` lists them.
	r = run(t, nil, "__complete", "show", "--store", "../testdata/demo", "")
	if i, j := strings.Index(r.stdout, "ses_116b2f8bffffsSjTYTHkQXRjCt"), strings.Index(r.stdout, "ses_2b28944fffff85dc4PToKKeEYM"); i < 0 || j < 0 || i > j {
		t.Errorf("sessions are not completed newest first:\n%s", r.stdout)
	}
	// Fails soft: no store, no completions, no error.
	r = run(t, nil, "__complete", "scan", "/no/such/store", "--session", "")
	if r.code != ExitOK || strings.Contains(r.stdout, "ses_") || strings.Contains(r.stderr, "sessfix:") {
		t.Errorf("missing store: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestCompleteStrategiesAndFailOn(t *testing.T) {
	r := run(t, nil, "__complete", "fix", "--strategy", "SF10")
	if !strings.Contains(r.stdout, "SF103=\t") || strings.Contains(r.stdout, "SF204") {
		t.Errorf("--strategy codes:\n%s", r.stdout)
	}
	r = run(t, nil, "__complete", "fix", "--strategy", "SF103=")
	for _, s := range fix.Strategies("SF103") {
		if !strings.Contains(r.stdout, "SF103="+s.Name+"\t") {
			t.Errorf("--strategy SF103= lacks %s:\n%s", s.Name, r.stdout)
		}
	}
	r = run(t, nil, "__complete", "scan", "--fail-on", "error,SF30")
	if !strings.Contains(r.stdout, "error,SF301\t") || strings.Contains(r.stdout, "error,SF101") {
		t.Errorf("--fail-on list:\n%s", r.stdout)
	}
	r = run(t, nil, "__complete", "scan", "--fail-on", "w")
	if !strings.Contains(r.stdout, "warning\t") {
		t.Errorf("--fail-on severity:\n%s", r.stdout)
	}
}
