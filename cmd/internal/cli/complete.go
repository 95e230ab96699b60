package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/sessfix/sessfix/pkg/scan"
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
