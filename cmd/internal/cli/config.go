package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/config"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/scan"
)

// Filters are the rule flags every command that scans shares: --select,
// --ignore and --fail-on. Register them with AddFilterFlags and fill what
// the user did not give from the config file with Factory.ApplyConfig.
type Filters struct {
	// Select and Ignore are rule codes or prefixes.
	Select, Ignore []string
	// FailOn is the --fail-on value: severities and rule codes.
	FailOn string
}

// FailOnUsage documents --fail-on everywhere it is registered.
const FailOnUsage = "exit 1 when findings remain at or above `SEVERITY` (error, warning, info) or of these rule codes (comma-separated)"

// AddFilterFlags registers --select, --ignore and --fail-on with their
// completions. verb completes the help text: "run", "fix", "watch for".
func AddFilterFlags(cmd *cobra.Command, fl *Filters, verb string) {
	f := cmd.Flags()
	f.StringSliceVar(&fl.Select, "select", nil, verb+" only these rule `CODES` or prefixes (comma-separated or repeated, e.g. SF1,SF203)")
	f.StringSliceVar(&fl.Ignore, "ignore", nil, "leave out these rule `CODES` or prefixes")
	f.StringVar(&fl.FailOn, "fail-on", DefaultFailOn.String(), FailOnUsage)
	_ = cmd.RegisterFlagCompletionFunc("select", RuleCodeList)
	_ = cmd.RegisterFlagCompletionFunc("ignore", RuleCodeList)
	_ = cmd.RegisterFlagCompletionFunc("fail-on", FailOnValues)
}

// CleanCodes drops empty entries and spaces and uppercases codes, so that
// "sf1, SF2," works.
func CleanCodes(in []string) []string {
	var out []string
	for _, c := range in {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, strings.ToUpper(c))
		}
	}
	return out
}

// ScanFilters validates the filters and returns them as scan options
// (rule filters only) and the failure policy.
func (fl *Filters) ScanFilters() (*scan.Options, FailPolicy, error) {
	sev, codes, err := ParseFailOn(fl.FailOn)
	if err != nil {
		return nil, FailPolicy{}, FlagErrorf("invalid --fail-on: %v", err)
	}
	opts := &scan.Options{Select: CleanCodes(fl.Select), Ignore: CleanCodes(fl.Ignore)}
	if err := opts.ValidateFilters(); err != nil {
		return nil, FailPolicy{}, &FlagError{Err: err}
	}
	return opts, FailPolicy{FailOn: sev, FailCodes: codes}, nil
}

// ConfigTargets points at a command's settings that a config file can
// provide. Nil pointers are settings the command does not have.
type ConfigTargets struct {
	Filters     *Filters
	Settle      *time.Duration
	Strategies  *[]string // CODE=NAME pairs, as --strategy
	Placeholder *string
}

// Config returns the config file's settings: the --config file, else the
// .sessfix.json/.sessfix.yaml found from the working directory up to the
// repository root, else the zero Config. It is read once per Factory. A
// missing --config file or invalid contents are usage errors (exit 2).
func (f *Factory) Config() (*config.Config, error) {
	if f.config != nil || f.configErr != nil {
		return f.config, f.configErr
	}
	f.config, f.configErr = f.loadConfig()
	return f.config, f.configErr
}

func (f *Factory) loadConfig() (*config.Config, error) {
	explicit := ""
	if f.Globals != nil {
		explicit = f.Globals.Config
	}
	var (
		c   *config.Config
		err error
	)
	if explicit != "" {
		c, err = config.Load(explicit)
	} else {
		var wd string
		wd, err = f.Workdir()
		if err == nil {
			c, err = config.Discover(wd)
		}
	}
	if err == nil {
		return c, nil
	}
	if errors.Is(err, config.ErrInvalid) {
		return nil, WithHints(&FlagError{Err: err}, "the config file's keys and values are described in docs/ci.md#the-config-file")
	}
	if explicit != "" && errors.Is(err, os.ErrNotExist) {
		return nil, WithHints(&FlagError{Err: err}, "check the --config path, or drop --config to use .sessfix.yaml from the repository")
	}
	return nil, err
}

// Workdir returns the working directory: paths in CI reports are made
// relative to it and the config file is looked for from it.
func (f *Factory) Workdir() (string, error) {
	if f.Getwd != nil {
		return f.Getwd()
	}
	return os.Getwd()
}

// ApplyConfig loads the config file and copies its settings into t for
// every flag the user did not set on cmd: flags win over the file. It
// returns the config so the command can apply its suppressions.
func (f *Factory) ApplyConfig(cmd *cobra.Command, t ConfigTargets) (*config.Config, error) {
	c, err := f.Config()
	if err != nil {
		return nil, err
	}
	set := func(name string) bool {
		fl := cmd.Flags().Lookup(name)
		return fl != nil && fl.Changed
	}
	if fl := t.Filters; fl != nil {
		if !set("select") && len(c.Select) > 0 {
			fl.Select = append([]string(nil), c.Select...)
		}
		if !set("ignore") && len(c.Ignore) > 0 {
			fl.Ignore = append([]string(nil), c.Ignore...)
		}
		if !set("fail-on") && c.FailOn != "" {
			fl.FailOn = c.FailOn
		}
	}
	if t.Settle != nil && !set("settle") {
		if d, ok := c.SettleDuration(); ok {
			*t.Settle = d
		}
	}
	if t.Placeholder != nil && !set("placeholder") && c.Placeholder != "" {
		*t.Placeholder = c.Placeholder
	}
	if t.Strategies != nil {
		// The file's choices first: a --strategy for the same code comes
		// later and wins.
		*t.Strategies = append(c.StrategyPairs(), *t.Strategies...)
	}
	return c, nil
}

// WarnUnusedSuppressions tells the user about suppressions that matched no
// finding: they are stale, or their ids or path are wrong.
func (f *Factory) WarnUnusedSuppressions(c *config.Config, unused []config.Suppression) {
	for _, s := range unused {
		var anchor []string
		for _, kv := range [][2]string{{"session", s.Session}, {"message", s.Message}, {"part", s.Part}, {"path", s.Path}} {
			if kv[1] != "" {
				anchor = append(anchor, kv[0]+" "+kv[1])
			}
		}
		f.IOStreams.Statusf("note: suppression of %s (%s) in %s matched no finding; remove it if the finding is gone", s.Code, strings.Join(anchor, ", "), c.Path)
	}
}

// SuppressedNote says how many findings the config suppressed, on stderr.
func (f *Factory) SuppressedNote(c *config.Config, n int) {
	if n == 0 || c == nil {
		return
	}
	f.IOStreams.Statusf("%s suppressed by %s", plural.Count(n, "finding", "findings"), c.Path)
}

// RepairOptions checks --strategy and --placeholder and returns them as
// the repair choices of fix and watch.
func RepairOptions(strategies []string, placeholder string) (fix.Options, error) {
	choice, err := fix.ParseStrategies(strategies)
	if err != nil {
		return fix.Options{}, &FlagError{Err: err}
	}
	if err := fix.ValidatePlaceholder(placeholder); err != nil {
		return fix.Options{}, &FlagError{Err: fmt.Errorf("invalid --placeholder: %w", err)}
	}
	return fix.Options{Strategies: choice, Placeholder: placeholder}, nil
}
