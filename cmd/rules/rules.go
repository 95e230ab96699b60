package rules

import (
	"github.com/spf13/cobra"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/pkg/report"
	"github.com/sessfix/sessfix/pkg/scan"
)

// RulesOptions are the parsed inputs of `sessfix rules`.
type RulesOptions struct {
	Factory *cli.Factory
	// Rules lists the rules to print; nil means scan.Rules().
	Rules func() []*scan.Rule
}

// NewCmdRules returns `sessfix rules`. runF replaces the work in tests.
func NewCmdRules(f *cli.Factory, runF func(*RulesOptions) error) *cobra.Command {
	opts := &RulesOptions{Factory: f}
	return &cobra.Command{
		Annotations: cli.Prints("text", "json"),
		Use:         "rules",
		Short:       "List the rules sessfix checks",
		Long: `List every rule: its stable code, name, severity, whether ` + "`sessfix fix`" + ` repairs it, and a
one-line summary. Codes are never reused; use them with scan --select/--ignore and with
` + "`sessfix explain CODE`" + `. --format json prints an array with each rule's full documentation.`,
		Example: `  sessfix rules
  sessfix rules --format json | jq -r '.[] | select(.fixable) | .code'`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return RunRules(opts)
		},
	}
}

// RunRules does the work of `sessfix rules`.
func RunRules(opts *RulesOptions) error {
	f := opts.Factory
	list := scan.Rules
	if opts.Rules != nil {
		list = opts.Rules
	}
	format := f.Format()
	out, err := f.OpenOutput()
	if err != nil {
		return err
	}
	if format == "json" {
		err = report.PrintRulesJSON(out.W, list())
	} else {
		err = report.PrintRulesText(out.W, list(), report.NewStyles(out.Color))
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
