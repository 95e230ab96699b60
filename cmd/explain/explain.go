package explain

import (
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/pkg/report"
	"github.com/sessfix/sessfix/pkg/scan"
)

// ExplainOptions are the parsed inputs of `sessfix explain`.
type ExplainOptions struct {
	Factory *cli.Factory
	// Code is a rule code (SF103) or name (thinking-not-first).
	Code string
	// Rules lists the known rules; nil means scan.Rules().
	Rules func() []*scan.Rule
}

// NewCmdExplain returns `sessfix explain`. runF replaces the work in tests.
func NewCmdExplain(f *cli.Factory, runF func(*ExplainOptions) error) *cobra.Command {
	opts := &ExplainOptions{Factory: f}
	return &cobra.Command{
		Annotations: cli.Prints("text", "json"),
		Use:         "explain CODE",
		Short:       "Explain a rule: what it finds, why it matters, how it is fixed",
		Long: `Print the documentation of one rule: what it finds, why it breaks a session, the error a provider
returns for it, and what ` + "`sessfix fix`" + ` does about it. CODE is a rule code such as SF103 (any case) or a
rule name such as thinking-not-first. ` + "`sessfix rules`" + ` lists them all.`,
		Example: `  sessfix explain SF103
  sessfix explain empty-text-part
  sessfix explain SF302 --format json`,
		Args:              cli.ExactArgs(1, "explain needs one rule code, e.g. sessfix explain SF103"),
		ValidArgsFunction: cli.RuleCodes,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Code = args[0]
			if runF != nil {
				return runF(opts)
			}
			return RunExplain(opts)
		},
	}
}

// RunExplain does the work of `sessfix explain`.
func RunExplain(opts *ExplainOptions) error {
	f := opts.Factory
	rules := scan.Rules()
	if opts.Rules != nil {
		rules = opts.Rules()
	}
	format := f.Format()
	rule := find(rules, opts.Code)
	if rule == nil {
		hint := "run `sessfix rules` to list every code"
		if near := Near(rules, opts.Code); len(near) > 0 {
			hint = "did you mean " + strings.Join(near, ", ") + "? " + hint
		}
		return cli.WithHints(cli.FlagErrorf("unknown rule code %q", opts.Code), hint)
	}
	out, err := f.OpenOutput()
	if err != nil {
		return err
	}
	if format == "json" {
		err = report.PrintRuleJSON(out.W, rule)
	} else {
		err = report.PrintExplain(out.W, rule, report.NewStyles(out.Color))
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

func find(rules []*scan.Rule, code string) *scan.Rule {
	for _, r := range rules {
		if strings.EqualFold(r.Code, code) || strings.EqualFold(r.Name, code) {
			return r
		}
	}
	return nil
}

// Near returns up to five codes that look like what the user typed: codes or
// names within two edits, else codes that share its first three characters.
func Near(rules []*scan.Rule, typed string) []string {
	typed = strings.ToUpper(strings.TrimSpace(typed))
	type cand struct {
		code string
		dist int
	}
	var cands []cand
	for _, r := range rules {
		d := min(distance(typed, strings.ToUpper(r.Code)), distance(typed, strings.ToUpper(r.Name)))
		if d <= 2 {
			cands = append(cands, cand{r.Code, d})
		}
	}
	if len(cands) == 0 && len(typed) >= 3 {
		for _, r := range rules {
			if strings.HasPrefix(strings.ToUpper(r.Code), typed[:3]) {
				cands = append(cands, cand{r.Code, 3})
			}
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].dist != cands[j].dist {
			return cands[i].dist < cands[j].dist
		}
		return cands[i].code < cands[j].code
	})
	var out []string
	for i, c := range cands {
		if i == 5 {
			break
		}
		out = append(out, c.code)
	}
	return out
}

// distance is the Levenshtein distance between a and b (bytes).
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
