package cmd

import (
	"encoding/json"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	"github.com/sessfix/sessfix/pkg/scan"
)

func TestRules(t *testing.T) {
	r := run(t, nil, "rules")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	rules := scan.Rules()
	if len(rules) == 0 {
		t.Fatal("no rules registered")
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != len(rules)+1 {
		t.Fatalf("%d lines for %d rules:\n%s", len(lines), len(rules), r.stdout)
	}
	for i, rule := range rules {
		fields := strings.Fields(lines[i+1])
		fix := map[bool]string{true: "yes", false: "no"}[rule.Fixable]
		sev := rule.Severity.String()
		if rule.Lower != 0 {
			sev += "/" + rule.Lower.String()
		}
		if len(fields) < 4 || fields[0] != rule.Code || fields[1] != rule.Name || fields[2] != sev || fields[3] != fix {
			t.Errorf("row %q does not describe %s %s %s fixable=%v", lines[i+1], rule.Code, rule.Name, rule.Severity, rule.Fixable)
		}
	}
	if ansi.MatchString(r.stdout) {
		t.Error("piped rules table has colour")
	}
	if c := run(t, tty, "rules"); !ansi.MatchString(c.stdout) {
		t.Error("rules table on a terminal has no colour")
	}

	j := run(t, nil, "rules", "--format", "json")
	var got []map[string]any
	if err := json.Unmarshal([]byte(j.stdout), &got); err != nil {
		t.Fatalf("rules --format json: %v\n%s", err, j.stdout)
	}
	if len(got) != len(rules) || got[0]["code"] != rules[0].Code || got[0]["severity"] != rules[0].Severity.String() {
		t.Errorf("rules json = %v", got)
	}
	if bad := run(t, nil, "rules", "--format", "sarif"); bad.code != ExitUsage {
		t.Errorf("rules --format sarif: exit %d, want 2", bad.code)
	}
	if extra := run(t, nil, "rules", "SF101"); extra.code != ExitUsage {
		t.Errorf("rules SF101: exit %d, want 2", extra.code)
	}
}

func TestExplain(t *testing.T) {
	rule := scan.Rules()[0]
	for _, arg := range []string{rule.Code, strings.ToLower(rule.Code), rule.Name} {
		r := run(t, nil, "explain", arg)
		if r.code != ExitOK {
			t.Fatalf("explain %s: exit %d: %s", arg, r.code, r.stderr)
		}
		if !strings.HasPrefix(r.stdout, rule.Code+" "+rule.Name+" ("+rule.Severity.String()) {
			t.Errorf("explain %s starts %q", arg, r.stdout)
		}
		flat := strings.Join(strings.Fields(r.stdout), " ")
		for _, part := range []string{rule.Summary, firstLine(rule.What), firstLine(rule.Why)} {
			if part = strings.Join(strings.Fields(part), " "); part != "" && !strings.Contains(flat, part) {
				t.Errorf("explain %s lacks %q:\n%s", arg, part, r.stdout)
			}
		}
		if ansi.MatchString(r.stdout) {
			t.Errorf("explain piped has colour")
		}
	}
	if c := run(t, tty, "explain", rule.Code); !ansi.MatchString(c.stdout) {
		t.Error("explain on a terminal has no styling")
	}
	j := run(t, nil, "explain", rule.Code, "--format", "json")
	var got map[string]any
	if err := json.Unmarshal([]byte(j.stdout), &got); err != nil || got["code"] != rule.Code || got["what"] != rule.What {
		t.Errorf("explain --format json = %v (%v)", got, err)
	}

	bad := run(t, nil, "explain", "SF10")
	if bad.code != ExitUsage {
		t.Errorf("explain SF10: exit %d, want 2", bad.code)
	}
	if !strings.Contains(bad.stderr, `sessfix: unknown rule code "SF10"`) || !strings.Contains(bad.stderr, "hint: did you mean "+rule.Code) {
		t.Errorf("explain SF10 stderr:\n%s", bad.stderr)
	}
	none := run(t, nil, "explain")
	if none.code != ExitUsage || !strings.Contains(none.stderr, "explain needs one rule code") {
		t.Errorf("explain without a code: exit %d, stderr %s", none.code, none.stderr)
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func TestVersion(t *testing.T) {
	set := func(f *cli.Factory, _ *iostreams.IOStreams) {
		f.Build = cli.BuildInfo{Version: "1.2.3", Commit: "abc1234", Date: "2026-01-02", GoVersion: "go1.26.8"}
	}
	r := run(t, set, "version")
	if r.stdout != "sessfix 1.2.3 (commit abc1234, built 2026-01-02, go1.26.8)\n" {
		t.Errorf("version = %q", r.stdout)
	}
	j := run(t, set, "version", "--format", "json")
	var got cli.BuildInfo
	if err := json.Unmarshal([]byte(j.stdout), &got); err != nil || got.Version != "1.2.3" || got.Commit != "abc1234" || got.Date != "2026-01-02" {
		t.Errorf("version json = %s (%v)", j.stdout, err)
	}
}

func TestBuildInfo(t *testing.T) {
	read := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{
			Main: debug.Module{Version: "v0.3.0"},
			Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "0123456789abcdef0123"},
				{Key: "vcs.time", Value: "2026-03-04T05:06:07Z"},
				{Key: "vcs.modified", Value: "true"},
			},
		}, true
	}
	b := buildInfo("", "", "", read)
	if b.Version != "v0.3.0" || b.Commit != "0123456789ab-dirty" || b.Date != "2026-03-04T05:06:07Z" {
		t.Errorf("from build info: %+v", b)
	}
	b = buildInfo("1.0.0", "feedbee", "2026-01-01", read)
	if b.Version != "1.0.0" || b.Commit != "feedbee" || b.Date != "2026-01-01" {
		t.Errorf("ldflags must win: %+v", b)
	}
	devel := func() (*debug.BuildInfo, bool) { return &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true }
	if b := buildInfo("", "", "", devel); b.Version != "dev" {
		t.Errorf("devel build version = %q, want dev", b.Version)
	}
}

func TestHelpDocumentsExitCodes(t *testing.T) {
	r := run(t, nil, "scan", "--help")
	if r.code != ExitOK {
		t.Fatalf("exit %d", r.code)
	}
	for _, code := range []int{ExitOK, ExitFindings, ExitUsage, ExitFailure, ExitLocked, ExitHangup, ExitInterrupted, ExitTerminated} {
		if !documentsCode(r.stdout, code) {
			t.Errorf("scan --help does not document exit code %d:\n%s", code, r.stdout)
		}
	}
	for _, cmd := range []string{"scan", "rules", "explain", "version", "sessions", "show", "drop", "rewind", "fork"} {
		h := run(t, nil, cmd, "--help")
		if !strings.Contains(h.stdout, "Examples:") {
			t.Errorf("%s --help has no examples", cmd)
		}
	}
}

func documentsCode(help string, code int) bool {
	for _, l := range strings.Split(help, "\n") {
		f := strings.Fields(l)
		if len(f) > 1 && f[0] == strconv.Itoa(code) {
			return true
		}
	}
	return false
}

func TestCompletion(t *testing.T) {
	r := run(t, nil, "__complete", "explain", "SF10")
	for _, rule := range scan.Rules() {
		if strings.HasPrefix(rule.Code, "SF10") && !strings.Contains(r.stdout, rule.Code+"\t"+rule.Name) {
			t.Errorf("explain completion lacks %s:\n%s", rule.Code, r.stdout)
		}
		if !strings.HasPrefix(rule.Code, "SF10") && strings.Contains(r.stdout, rule.Code) {
			t.Errorf("explain completion offers %s for SF10:\n%s", rule.Code, r.stdout)
		}
	}
	s := run(t, nil, "__complete", "scan", "--select", "SF101,SF2")
	if !strings.Contains(s.stdout, "SF101,SF20") {
		t.Errorf("--select completion does not keep earlier codes:\n%s", s.stdout)
	}
	if c := run(t, nil, "completion", "bash"); c.code != ExitOK || !strings.Contains(c.stdout, "sessfix") {
		t.Errorf("completion bash: exit %d", c.code)
	}
}
