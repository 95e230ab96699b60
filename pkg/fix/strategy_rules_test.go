package fix

import (
	"sort"
	"testing"

	"github.com/sessfix/sessfix/pkg/scan"
)

// TestEveryFixableRuleHasStrategies: the rule registry and the strategy
// table agree. A rule that says it is fixable has strategies to try, a
// report-only rule has none, and every code in the table is a registered
// rule (a strategy nothing can reach is dead; a fixable rule without one
// is reported as "report only" by fix while scan and `explain` promise a
// repair).
func TestEveryFixableRuleHasStrategies(t *testing.T) {
	for _, r := range scan.Rules() {
		has := len(Strategies(r.Code)) > 0
		if r.Fixable && !has {
			t.Errorf("%s is fixable (%s) but has no strategy", r.Code, r.Fix)
		}
		if !r.Fixable && has && r.Code != "SF302" {
			t.Errorf("%s is report only but has strategies", r.Code)
		}
	}
	var codes []string
	for code := range strategyTable {
		codes = append(codes, code)
	}
	sort.Strings(codes)
	for _, code := range codes {
		r := scan.Lookup(code)
		if r == nil {
			t.Errorf("strategy table names %s, which is no rule", code)
			continue
		}
		if !r.Fixable {
			t.Errorf("strategy table names %s, which is report only", code)
		}
	}
}
