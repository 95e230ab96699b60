package scan

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var codeRe = regexp.MustCompile(`^SF[1-9][0-9]{2}$`)
var nameRe = regexp.MustCompile(`^[a-z]+(-[a-z]+)*$`)

// recordRuleCodes are the record rules rules.md defines; each must be
// registered.
var recordRuleCodes = []string{
	"SF101", "SF102", "SF103", "SF104", "SF105", "SF106", "SF107",
	"SF201", "SF202", "SF203", "SF204", "SF205", "SF301", "SF302",
}

func TestRegistry(t *testing.T) {
	codes, names := map[string]bool{}, map[string]bool{}
	rules := Rules()
	for i, r := range rules {
		if !codeRe.MatchString(r.Code) {
			t.Errorf("rule code %q is not SFnnn", r.Code)
		}
		if codes[r.Code] {
			t.Errorf("rule code %s registered twice", r.Code)
		}
		codes[r.Code] = true
		if !nameRe.MatchString(r.Name) || names[r.Name] {
			t.Errorf("%s: name %q is not a unique kebab-case name", r.Code, r.Name)
		}
		names[r.Name] = true
		if i > 0 && rules[i-1].Code >= r.Code {
			t.Errorf("Rules() not in code order at %s", r.Code)
		}
		if r.Severity < Info || r.Severity > Error {
			t.Errorf("%s: severity not set", r.Code)
		}
		if (r.Check == nil) == (r.StoreCheck == nil) {
			t.Errorf("%s: wants exactly one of Check and StoreCheck", r.Code)
		}
		if r.StoreCheck != nil && r.Fixable && r.Code != SF501 && r.Code != SF502 && r.Code != SF503 {
			t.Errorf("%s: only SF501, SF502 and SF503 of the store-health rules are repaired", r.Code)
		}
		if r.Summary == "" || strings.ToLower(r.Summary) != r.Summary || strings.HasSuffix(r.Summary, ".") {
			t.Errorf("%s: summary %q must be set, lowercase, without a trailing period", r.Code, r.Summary)
		}
		for field, doc := range map[string]string{"What": r.What, "Why": r.Why, "FixDoc": r.FixDoc} {
			if len(doc) < 40 || !strings.HasSuffix(doc, ".") {
				t.Errorf("%s: %s doc must be full sentences, got %q", r.Code, field, doc)
			}
		}
		if r.Fixable != (r.Fix != "") {
			t.Errorf("%s: Fixable=%v but Fix=%q", r.Code, r.Fixable, r.Fix)
		}
		if Lookup(strings.ToLower(r.Code)) != r {
			t.Errorf("Lookup(%q) does not find the rule", strings.ToLower(r.Code))
		}
	}
	for _, c := range recordRuleCodes {
		if !codes[c] {
			t.Errorf("record rule %s is not registered", c)
		}
	}
}

func TestRulesDocUpToDate(t *testing.T) {
	var want bytes.Buffer
	if err := WriteRulesMarkdown(&want); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", RulesDocPath)
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v (generate it with `%s` from the repository root)", RulesDocPath, err, RulesDocCommand)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("%s is stale: regenerate it with `%s` from the repository root", RulesDocPath, RulesDocCommand)
	}
}

func TestRulesMarkdownCoversEveryRule(t *testing.T) {
	var b bytes.Buffer
	if err := WriteRulesMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	doc := b.String()
	for _, r := range Rules() {
		if !strings.Contains(doc, "\n## "+r.Code+" "+r.Name+"\n") {
			t.Errorf("docs have no section for %s", r.Code)
		}
		if !strings.Contains(doc, r.Why) {
			t.Errorf("docs for %s lack the Why text", r.Code)
		}
	}
	var again bytes.Buffer
	_ = WriteRulesMarkdown(&again)
	if again.String() != doc {
		t.Error("WriteRulesMarkdown is not deterministic")
	}
}

// TestRuleList checks the rule list: the families are in code order and do
// not overlap, each lists its rules in code order within its range, and
// every rule file (sfNNN.go) defines a rule the list holds.
func TestRuleList(t *testing.T) {
	listed := map[string]bool{}
	last := ""
	for i, f := range Families {
		if i > 0 && Families[i-1].Last >= f.First {
			t.Errorf("family %s (%s–%s) overlaps or precedes %s", f.Name, f.First, f.Last, Families[i-1].Name)
		}
		for _, r := range f.Rules {
			if !f.Has(r.Code) {
				t.Errorf("%s is listed in family %s (%s–%s)", r.Code, f.Name, f.First, f.Last)
			}
			if r.Code <= last {
				t.Errorf("%s is listed after %s", r.Code, last)
			}
			last = r.Code
			listed[r.Code] = true
		}
	}
	files, err := filepath.Glob("sf[0-9][0-9][0-9].go")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		code := strings.ToUpper(strings.TrimSuffix(file, ".go"))
		if !listed[code] {
			t.Errorf("%s defines no rule the list holds (want rule%s in a family)", file, code)
		}
	}
	if len(registry) != len(listed) {
		t.Errorf("registry holds %d rules, the list %d", len(registry), len(listed))
	}
}
