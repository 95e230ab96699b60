package cli

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store/shapes"
)

// RuleCodes completes one rule code, with the rule's name as description.
func RuleCodes(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return codesWithPrefix("", toComplete), cobra.ShellCompDirectiveNoFileComp
}

// RuleCodeList completes a comma-separated list of rule codes (the value of
// --select and --ignore): the codes after the last comma.
func RuleCodeList(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	done, last := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		done, last = toComplete[:i+1], toComplete[i+1:]
	}
	return codesWithPrefix(done, last), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

func codesWithPrefix(done, prefix string) []string {
	var out []string
	for _, r := range scan.Rules() {
		if strings.HasPrefix(strings.ToUpper(r.Code), strings.ToUpper(prefix)) {
			out = append(out, done+r.Code+"\t"+r.Name)
		}
	}
	return out
}

// FailOnValues completes a --fail-on list: severities and rule codes after
// the last comma.
func FailOnValues(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	done, last := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		done, last = toComplete[:i+1], toComplete[i+1:]
	}
	var out []string
	for _, s := range []string{"error", "warning", "info"} {
		if strings.HasPrefix(s, strings.ToLower(last)) {
			out = append(out, done+s+"\tfindings of this severity or above")
		}
	}
	out = append(out, codesWithPrefix(done, last)...)
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// StrategyPairs completes --strategy CODE=NAME: first the codes that have
// repair strategies, then, after the '=', that code's strategy names with
// what each does.
func StrategyPairs(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	code, name, hasEq := strings.Cut(toComplete, "=")
	var out []string
	if !hasEq {
		for _, r := range scan.Rules() {
			if len(fix.Strategies(r.Code)) > 0 && strings.HasPrefix(strings.ToUpper(r.Code), strings.ToUpper(code)) {
				out = append(out, r.Code+"=\t"+r.Name)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
	for _, s := range fix.Strategies(code) {
		if strings.HasPrefix(s.Name, strings.ToLower(name)) {
			out = append(out, code+"="+s.Name+"\t"+s.Doc)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completionTimeout bounds how long session completion may list stores: a
// shell waiting on TAB must not hang on a huge or locked store.
const completionTimeout = 2 * time.Second

// SessionIDs completes --session with the ids of the sessions in the stores
// named on the command line, or the discovered stores, with each session's
// title as description. It fails soft: any error completes nothing.
func (f *Factory) SessionIDs(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	const dir = cobra.ShellCompDirectiveNoFileComp
	var (
		disc *shapes.Discovery
		err  error
	)
	if len(args) > 0 && f.Open != nil {
		disc, err = f.Open(args)
	} else if f.Discover != nil && f.Env != nil {
		disc, err = f.Discover(f.Env())
	}
	if err != nil || disc == nil {
		return nil, dir
	}
	defer disc.Close()
	ctx := context.Background()
	if cmd != nil && cmd.Context() != nil {
		ctx = cmd.Context()
	}
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	seen := map[string]bool{}
	var out []string
	for _, st := range disc.Stores {
		refs, err := st.List(ctx)
		if err != nil {
			continue
		}
		for _, ref := range refs {
			if seen[ref.ID] || !strings.HasPrefix(ref.ID, toComplete) {
				continue
			}
			seen[ref.ID] = true
			c := ref.ID
			if t := strings.Join(strings.Fields(ref.Title), " "); t != "" {
				c += "\t" + t
			}
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out, dir
}
