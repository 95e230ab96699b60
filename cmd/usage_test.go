package cmd

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/pkg/report"
)

// usageErrors are command lines that are usage errors, built from the
// command tree: every command, and every command added later, is probed
// with an unknown flag, a value its typed flags cannot parse, a --format it
// does not print, positional arguments its Args refuse (an unknown
// subcommand, for a command that groups others), and without the flags it
// requires.
func usageErrors(t *testing.T) [][]string {
	t.Helper()
	root := NewCmdRoot(cli.New(cli.BuildInfo{Version: "test"}))
	var out [][]string
	var visit func(c *cobra.Command)
	visit = func(c *cobra.Command) {
		if strings.HasPrefix(c.Name(), "__") {
			return // cobra's completion requests
		}
		path := strings.Fields(c.CommandPath())[1:]
		with := func(args ...string) []string { return append(slices.Clone(path), args...) }
		out = append(out, with("--no-such-flag"))
		c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
			switch fl.Value.Type() {
			case "bool", "duration", "int", "int64", "uint", "float64", "count":
				out = append(out, with("--"+fl.Name+"=not-a-value"))
			}
			if req := fl.Annotations[cobra.BashCompOneRequiredFlag]; len(req) > 0 && req[0] == "true" {
				out = append(out, with())
			}
		})
		for _, format := range append(report.Formats(), "xml") {
			if !c.HasParent() {
				break // sessfix alone prints its help, whatever the format
			}
			if !slices.Contains(cli.Formats(c), format) {
				out = append(out, with("--format", format))
			}
		}
		extra := []string{"no-such-thing", "b", "c", "d", "e", "f", "g", "h"}
		if c.ValidateArgs(extra) != nil || c.HasSubCommands() {
			out = append(out, with(extra...))
		}
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(root)
	return out
}

func TestEveryUsageErrorExits2(t *testing.T) {
	cases := usageErrors(t)
	commands := map[string]bool{}
	for _, args := range cases {
		name := strings.Join(args, " ")
		i := slices.IndexFunc(args, func(a string) bool { return strings.HasPrefix(a, "-") || a == "no-such-thing" })
		if i < 0 {
			i = len(args)
		}
		commands[strings.Join(args[:i], " ")] = true
		r := run(t, nil, args...)
		if r.code != ExitUsage {
			t.Errorf("sessfix %s: exit %d, want %d\nstdout: %s\nstderr: %s", name, r.code, ExitUsage, r.stdout, r.stderr)
			continue
		}
		if !strings.HasPrefix(r.stderr, "sessfix: ") || r.stdout != "" {
			t.Errorf("sessfix %s: want only a `sessfix: ` error on stderr\nstdout: %s\nstderr: %s", name, r.stdout, r.stderr)
		}
	}
	// The tree was walked: the commands and subcommands are all there.
	for _, c := range []string{"", "scan", "fix", "undo", "backups", "backups prune", "completion", "completion bash", "help", "help man", "watch"} {
		if !commands[c] {
			t.Errorf("no usage error probed for %q", c)
		}
	}
}

func TestUsageErrorMessages(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"backups", "prune"}, []string{"sessfix: backups prune needs --older-than", "hint: for example: sessfix backups prune --older-than 30d"}},
		{[]string{"completion", "tcsh"}, []string{`sessfix: unknown command "tcsh" for sessfix completion`, "hint: completion takes one of: bash, fish, powershell, zsh"}},
		{[]string{"fix", "--format", "sarif"}, []string{`sessfix: fix prints text or json, not "sarif"`, "hint: the CI formats (github, junit, sarif) are for `sessfix scan`; docs/ci.md"}},
		{[]string{"scan", "--format", "xml"}, []string{`sessfix: scan prints text, github, json, junit or sarif, not "xml"`}},
		{[]string{"rules", "SF101"}, []string{`sessfix: rules takes no arguments, got "SF101"`, "hint: run `sessfix rules --help` for its flags and examples"}},
		{[]string{"backups", "prune", "--older-than", "3x"}, []string{"hint: run `sessfix backups prune --help` for its flags and examples"}},
	} {
		r := run(t, nil, tt.args...)
		for _, w := range tt.want {
			if !strings.Contains(r.stderr, w+"\n") {
				t.Errorf("sessfix %s: stderr lacks %q:\n%s", strings.Join(tt.args, " "), w, r.stderr)
			}
		}
	}
	// Without a shell, completion shows its help: a question, not an error.
	if r := run(t, nil, "completion"); r.code != ExitOK || !strings.Contains(r.stdout, "bash") {
		t.Errorf("sessfix completion: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestMessagesNameAPathOnce: an error about a file names it once, with the
// system's reason, not the reason's own copy of the path.
func TestMessagesNameAPathOnce(t *testing.T) {
	dir := t.TempDir()
	missing := dir + "/no/such/dir/report.json"
	config := dir + "/nope.yaml"
	for _, tt := range []struct {
		args []string
		path string
		want string
	}{
		{[]string{"scan", "-o", missing, healthy}, missing, "sessfix: cannot write the report to " + missing + ": no such file or directory"},
		{[]string{"scan", "--config", config, healthy}, config, "sessfix: cannot read the sessfix config " + config + ": no such file or directory"},
	} {
		r := run(t, nil, tt.args...)
		if !strings.Contains(r.stderr, tt.want+"\n") || strings.Count(r.stderr, tt.path) != 1 {
			t.Errorf("sessfix %s: want %q, the path once:\n%s", strings.Join(tt.args, " "), tt.want, r.stderr)
		}
	}
}
