package fix

import (
	"sort"
	"strings"
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
		if !r.Fixable && has {
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

// TestReportOnlyPreflightRuleTakesNoStrategy: --strategy on a report-only
// preflight rule is refused as for any report-only rule, instead of being
// taken (with SF302's strategies) and doing nothing.
func TestReportOnlyPreflightRuleTakesNoStrategy(t *testing.T) {
	for _, code := range []string{"SF158", "SF159", "SF172"} {
		err := ValidateStrategies(map[string]string{code: "strip"})
		if err == nil || !strings.Contains(err.Error(), "rule "+code+" has no repair strategies") {
			t.Errorf("--strategy %s=strip: %v, want no repair strategies", code, err)
		}
	}
	if err := ValidateStrategies(map[string]string{"SF153": "strip"}); err != nil {
		t.Errorf("--strategy SF153=strip: %v", err)
	}
}
