package cli

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessfix/sessfix/cmd/internal/iostreams"
)

// runWithConfig parses args on a command with the shared flags and fills
// them from the config file at path.
func runWithConfig(t *testing.T, path string, args ...string) (*Filters, time.Duration, []string, string, error) {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	f := &Factory{IOStreams: ios, Globals: &Globals{Config: path}}
	fl := &Filters{}
	var (
		settle      time.Duration
		strategies  []string
		placeholder string
		applyErr    error
	)
	cmd := &cobra.Command{Use: "x", RunE: func(cmd *cobra.Command, _ []string) error {
		_, applyErr = f.ApplyConfig(cmd, ConfigTargets{Filters: fl, Settle: &settle, Strategies: &strategies, Placeholder: &placeholder})
		return nil
	}}
	AddFilterFlags(cmd, fl, "run")
	cmd.Flags().DurationVar(&settle, "settle", 5*time.Second, "")
	cmd.Flags().StringArrayVar(&strategies, "strategy", nil, "")
	cmd.Flags().StringVar(&placeholder, "placeholder", "[user interrupted]", "")
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	return fl, settle, strategies, placeholder, applyErr
}

func TestFlagsWinOverConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ci.yaml")
	cfg := "select: [SF104]\nignore: [SF204]\nfail-on: error\nsettle: 1m\nstrategies: {SF103: strip}\nplaceholder: '[cut]'\n"
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	fl, settle, strat, ph, err := runWithConfig(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fl.Select, []string{"SF104"}) || !reflect.DeepEqual(fl.Ignore, []string{"SF204"}) || fl.FailOn != "error" ||
		settle != time.Minute || !reflect.DeepEqual(strat, []string{"SF103=strip"}) || ph != "[cut]" {
		t.Errorf("from the file: %+v %v %q %q", fl, settle, strat, ph)
	}
	fl, settle, strat, ph, err = runWithConfig(t, path, "--select", "SF301", "--fail-on", "info", "--settle", "2s",
		"--strategy", "SF103=move", "--placeholder", "[x]")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fl.Select, []string{"SF301"}) || !reflect.DeepEqual(fl.Ignore, []string{"SF204"}) || fl.FailOn != "info" ||
		settle != 2*time.Second || ph != "[x]" {
		t.Errorf("flags must win: %+v %v %q", fl, settle, ph)
	}
	// Both strategies are passed on; the flag's comes last and wins.
	if !reflect.DeepEqual(strat, []string{"SF103=strip", "SF103=move"}) {
		t.Errorf("strategies = %q", strat)
	}
}

func TestConfigErrorsAreUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, ".sessfix.yaml")
	if err := os.WriteFile(bad, []byte("fail-on: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{bad, filepath.Join(dir, "missing.yaml")} {
		_, _, _, _, err := runWithConfig(t, path)
		var fe *FlagError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want a usage error naming the file", path, err)
		}
		if len(Hints(err)) == 0 {
			t.Errorf("%s: no hint", path)
		}
	}
}

func TestConfigDiscoveredFromWorkdir(t *testing.T) {
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, ".sessfix.json"), []byte(`{"ignore": ["SF3"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(repo, "fixtures")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	ios, _, _, _ := iostreams.Test()
	f := &Factory{IOStreams: ios, Getwd: func() (string, error) { return sub, nil }}
	c, err := f.Config()
	if err != nil || c.Path != filepath.Join(repo, ".sessfix.json") || !reflect.DeepEqual(c.Ignore, []string{"SF3"}) {
		t.Errorf("Config = %+v %v", c, err)
	}
}

func TestCleanCodes(t *testing.T) {
	got := CleanCodes([]string{" sf1", "", "SF203 ", "  "})
	if want := []string{"SF1", "SF203"}; !reflect.DeepEqual(got, want) {
		t.Errorf("CleanCodes = %q, want %q", got, want)
	}
}
