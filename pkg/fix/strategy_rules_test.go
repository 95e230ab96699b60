package fix

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
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
		if r.Fixable && DatabaseRule(r.Code) {
			continue // repaired as a whole database (dbrepair.go), not by strategies
		}
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
	for _, code := range []string{"SF158", "SF159"} {
		err := ValidateStrategies(map[string]string{code: "strip"})
		if err == nil || !strings.Contains(err.Error(), "rule "+code+" has no repair strategies") {
			t.Errorf("--strategy %s=strip: %v, want no repair strategies", code, err)
		}
	}
	if err := ValidateStrategies(map[string]string{"SF153": "strip"}); err != nil {
		t.Errorf("--strategy SF153=strip: %v", err)
	}
}

// TestEveryStrategyBelongsToARule: every strategy the package defines is
// tried for some rule (a rule's own, or SF302's, which the preflight rules
// share), and a rule's default fix names only mutations of its strategies,
// so `explain` and rules.md never promise a repair fix does not try.
// SF302's default fix (errorDrivenRecovery) stands for the strategies the
// stored error's class picks, all of which are among its own.
func TestEveryStrategyBelongsToARule(t *testing.T) {
	tried := map[string]bool{}
	for _, r := range scan.Rules() {
		ms := map[string]bool{}
		for _, st := range Strategies(r.Code) {
			tried[st.Name] = true
			for _, m := range strings.Split(st.Mutations, "+") {
				ms[m] = true
			}
		}
		if r.Fix == "" || r.Code == scan.SF302 {
			continue
		}
		if DatabaseRule(r.Code) {
			// Repaired as a whole database: its fix names the database
			// repairs (dbrepair.go), not strategies.
			for _, m := range strings.Split(r.Fix, "|") {
				if m != MutSalvageDatabase && m != MutReindexDatabase && m != MutCheckpointWAL {
					t.Errorf("%s: its default fix names %s, which is no database repair", r.Code, m)
				}
			}
			continue
		}
		for _, m := range strings.FieldsFunc(r.Fix, func(c rune) bool { return c == '|' || c == '+' }) {
			if !ms[m] {
				t.Errorf("%s: its default fix names %s, which none of its strategies applies", r.Code, m)
			}
		}
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	defined := 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			if id, isIdent := lit.Type.(*ast.Ident); !isIdent || id.Name != "Strategy" {
				return true
			}
			for _, e := range lit.Elts {
				kv, ok := e.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				if k, isIdent := kv.Key.(*ast.Ident); !isIdent || k.Name != "Name" {
					continue
				}
				name, err := strconv.Unquote(kv.Value.(*ast.BasicLit).Value)
				if err != nil {
					t.Fatal(err)
				}
				defined++
				if !tried[name] {
					t.Errorf("strategy %q is tried for no rule", name)
				}
			}
			return true
		})
	}
	if defined < 10 {
		t.Fatalf("found only %d strategies in the package's source", defined)
	}
}
