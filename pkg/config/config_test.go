package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

const yamlConfig = `# sessfix settings for this repository
select: [SF1, SF2]
ignore: [SF204]
fail-on: error,SF105
strategies:
  SF103: strip
placeholder: "[interrupted]"
settle: 30s
suppress:
  - code: SF104
    session: ses_a
    part: prt_3
    reason: the fixture keeps a whitespace-only part on purpose
  - code: SF2
    path: fixtures/legacy/**
    reason: legacy exports are kept as they were recorded
`

const jsonConfig = `{
  "select": ["SF1", "SF2"],
  "ignore": ["SF204"],
  "fail-on": "error,SF105",
  "strategies": {"SF103": "strip"},
  "placeholder": "[interrupted]",
  "settle": "30s",
  "suppress": [
    {"code": "SF104", "session": "ses_a", "part": "prt_3", "reason": "the fixture keeps a whitespace-only part on purpose"},
    {"code": "SF2", "path": "fixtures/legacy/**", "reason": "legacy exports are kept as they were recorded"}
  ]
}`

func TestYAMLAndJSONAgree(t *testing.T) {
	y, err := Parse([]byte(yamlConfig), false)
	if err != nil {
		t.Fatal(err)
	}
	j, err := Parse([]byte(jsonConfig), true)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(y, j) {
		t.Errorf("yaml and json differ:\n%+v\n%+v", y, j)
	}
	if d, ok := y.SettleDuration(); !ok || d != 30*time.Second {
		t.Errorf("settle = %v %v", d, ok)
	}
	if got := y.StrategyPairs(); !reflect.DeepEqual(got, []string{"SF103=strip"}) {
		t.Errorf("strategies = %q", got)
	}
	if y.FailOn != "error,SF105" || y.Placeholder != "[interrupted]" || len(y.Suppress) != 2 {
		t.Errorf("config = %+v", y)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"unknown key", "selekt: [SF1]\n", `line 1: unknown key "selekt" (a config file takes select, ignore, fail-on, strategies, placeholder, settle, suppress)`},
		{"unknown suppression key", "suppress:\n  - {code: SF104, sesion: ses_a, reason: why}\n", `line 2: unknown key "sesion" (a suppression takes code, session, message, part, path, reason)`},
		{"string for a list", "select: SF104\n", `line 1: "SF104" is a string, where a list belongs`},
		{"mapping for a list", "suppress: {code: SF104}\n", `line 1: a mapping, where a list belongs`},
		{"unknown code", "select: [SF999]\n", `select: unknown rule code or prefix "SF999"`},
		{"unknown strategy code", "strategies: {SF999: strip}\n", `unknown rule code "SF999"`},
		{"bad settle", "settle: soon\n", `settle: "soon" is not a duration`},
		{"no reason", "suppress:\n  - {code: SF104, session: ses_a}\n", "suppress[0] (SF104): reason is required"},
		{"blank reason", "suppress:\n  - {code: SF104, session: ses_a, reason: '  '}\n", "reason is required"},
		{"no code", "suppress:\n  - {session: ses_a, reason: why}\n", "suppress[0]: code is required"},
		{"bad code", "suppress:\n  - {code: XX1, session: ses_a, reason: why}\n", `"XX1"`},
		{"unanchored", "suppress:\n  - {code: SF104, reason: why}\n", "add a session, message, part or path"},
		{"bad glob", "suppress:\n  - {code: SF104, path: 'a/[', reason: why}\n", "bad path glob"},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.yaml), false)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
	if _, err := Parse([]byte(`{"selekt": []}`), true); err == nil || !strings.Contains(err.Error(), `unknown key "selekt" (a config file takes select,`) {
		t.Errorf("json unknown key: %v", err)
	}
	if _, err := Parse([]byte(`{"select": "SF104"}`), true); err == nil || !strings.Contains(err.Error(), "select: a JSON string, where a list belongs") {
		t.Errorf("json string for a list: %v", err)
	}
	// The decoders' words for Go types never reach the user.
	for _, bad := range []string{"selekt: 1\n", "select: SF1\n", "settle: [1]\n", "suppress: {code: x}\n", "suppress:\n  - {sesion: x}\n"} {
		if _, err := Parse([]byte(bad), false); err == nil || strings.Contains(err.Error(), "config.") || strings.Contains(err.Error(), "!!") || strings.Contains(err.Error(), "unmarshal") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if c, err := Parse(nil, false); err != nil || !reflect.DeepEqual(c, &Config{}) {
		t.Errorf("an empty file: %+v %v", c, err)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFindStopsAtRepoRoot(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	deep := filepath.Join(repo, "fixtures", "a")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	// Above the repository: never found from inside it.
	write(t, filepath.Join(root, ".sessfix.yaml"), "select: [SF1]\n")
	if p, err := Find(deep); err != nil || p != "" {
		t.Errorf("found %q (%v) above the repository root", p, err)
	}
	write(t, filepath.Join(repo, ".sessfix.yaml"), "select: [SF2]\n")
	p, err := Find(deep)
	if err != nil || p != filepath.Join(repo, ".sessfix.yaml") {
		t.Errorf("Find = %q %v", p, err)
	}
	c, err := Discover(deep)
	if err != nil || c.Path != p || !reflect.DeepEqual(c.Select, []string{"SF2"}) {
		t.Errorf("Discover = %+v %v", c, err)
	}
	write(t, filepath.Join(repo, ".sessfix.json"), "{}")
	if _, err := Find(deep); err == nil || !strings.Contains(err.Error(), "keep one of them") {
		t.Errorf("two config files: %v", err)
	}
	if c, err := Discover(t.TempDir()); err != nil || c.Path != "" {
		t.Errorf("no config: %+v %v", c, err)
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".sessfix.yaml")
	write(t, p, "suppress:\n  - {code: SF104, session: s}\n")
	if _, err := Load(p); err == nil || !strings.HasPrefix(err.Error(), p+": ") {
		t.Errorf("error does not start with the file: %v", err)
	}
	if _, err := Load(p + ".missing"); err == nil || !strings.Contains(err.Error(), "cannot read the sessfix config") {
		t.Errorf("missing file: %v", err)
	}
}

func finding(code, ses, msg, part, path string) scan.Finding {
	return scan.Finding{Code: code, SessionID: ses, MessageID: msg, PartID: part,
		StorePath: path, Location: store.Location{Path: path, Line: 1}}
}

func TestApply(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, ".sessfix.yaml")
	write(t, cfgPath, yamlConfig+"  - code: SF301\n    session: ses_gone\n    reason: stale entry\n")
	c, err := Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	legacy := filepath.Join(dir, "fixtures", "legacy", "old", "ses.json")
	fs := []scan.Finding{
		finding("SF104", "ses_a", "msg_1", "prt_3", "/x/a.json"),                      // suppressed by ids
		finding("SF104", "ses_a", "msg_1", "prt_4", "/x/a.json"),                      // other part
		finding("SF103", "ses_a", "msg_1", "prt_3", "/x/a.json"),                      // other code
		finding("SF203", "ses_b", "", "", legacy),                                     // suppressed by path
		finding("SF101", "ses_b", "", "", legacy),                                     // path matches, code not
		finding("SF203", "ses_c", "", "", filepath.Join(dir, "fixtures", "new.json")), // path does not match
	}
	unused := c.Apply(fs)
	want := []bool{true, false, false, true, false, false}
	for i, f := range fs {
		if f.Suppressed() != want[i] {
			t.Errorf("finding %d (%s %s %s): suppressed=%v, want %v", i, f.Code, f.SessionID, f.PartID, f.Suppressed(), want[i])
		}
		if f.Suppressed() && (f.Suppression.Source != cfgPath || f.Suppression.Reason == "") {
			t.Errorf("finding %d: suppression %+v", i, f.Suppression)
		}
		if f.Suppressed() != c.Suppressed(fs[i]) {
			t.Errorf("finding %d: Suppressed disagrees with Apply", i)
		}
	}
	if len(unused) != 1 || unused[0].Session != "ses_gone" {
		t.Errorf("unused = %+v", unused)
	}
	var nilCfg *Config
	if nilCfg.Apply(fs) != nil || nilCfg.Suppressed(fs[0]) {
		t.Error("a nil config suppresses")
	}
}

func TestMatchGlob(t *testing.T) {
	tests := []struct {
		glob, name string
		want       bool
	}{
		{"fixtures/**", "fixtures/a/b/c.json", true},
		{"fixtures/**", "fixtures", true},
		{"fixtures/*.json", "fixtures/a.json", true},
		{"fixtures/*.json", "fixtures/a/b.json", false},
		{"**/ses_*.json", "x/y/ses_1.json", true},
		{"**/ses_*.json", "ses_1.json", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/x/y/c", false},
		{"other/**", "fixtures/a.json", false},
	}
	for _, tt := range tests {
		if got, err := matchGlob(tt.glob, tt.name); err != nil || got != tt.want {
			t.Errorf("matchGlob(%q, %q) = %v %v, want %v", tt.glob, tt.name, got, err, tt.want)
		}
	}
}
