package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/sessfix/sessfix/pkg/scan"
)

// JSONRule is one rule in `sessfix rules --format json` and
// `sessfix explain --format json`.
type JSONRule struct {
	Code          string `json:"code"`
	Name          string `json:"name"`
	Severity      string `json:"severity"`
	LowerSeverity string `json:"lower_severity"` // "" when every finding has Severity
	LowerWhen     string `json:"lower_when"`
	Summary       string `json:"summary"`
	Fixable       bool   `json:"fixable"`
	Fix           string `json:"fix"`
	What          string `json:"what"`
	Why           string `json:"why"`
	ProviderError string `json:"provider_error"`
	FixDoc        string `json:"fix_doc"`
}

// NewJSONRule converts a rule to its JSON form.
func NewJSONRule(r *scan.Rule) JSONRule {
	lower := ""
	if r.Lower != 0 {
		lower = r.Lower.String()
	}
	return JSONRule{
		LowerSeverity: lower,
		Code:          r.Code,
		Name:          r.Name,
		Severity:      r.Severity.String(),
		LowerWhen:     r.LowerWhen,
		Summary:       r.Summary,
		Fixable:       r.Fixable,
		Fix:           r.Fix,
		What:          r.What,
		Why:           r.Why,
		ProviderError: r.ProviderError,
		FixDoc:        r.FixDoc,
	}
}

// PrintRulesJSON writes the rules as a JSON array (never null).
func PrintRulesJSON(w io.Writer, rules []*scan.Rule) error {
	out := []JSONRule{}
	for _, r := range rules {
		out = append(out, NewJSONRule(r))
	}
	return WriteJSON(w, out)
}

// PrintRuleJSON writes one rule as a JSON object.
func PrintRuleJSON(w io.Writer, r *scan.Rule) error { return WriteJSON(w, NewJSONRule(r)) }

// PrintRulesText writes a table of the rules: code, name, severity, whether
// `sessfix fix` repairs it, and the one-line summary. The layout is the same
// on a terminal and in a pipe; only the styling differs.
func PrintRulesText(w io.Writer, rules []*scan.Rule, st *Styles) error {
	bw := bufio.NewWriter(w)
	rows := [][]string{{"code", "name", "severity", "fixable", "summary"}}
	for _, r := range rules {
		fix := "no"
		if r.Fixable {
			fix = "yes"
		}
		sev := r.Severity.String()
		if r.Lower != 0 {
			sev += "/" + r.Lower.String()
		}
		rows = append(rows, []string{r.Code, r.Name, sev, fix, r.Summary})
	}
	sev := make([]scan.Severity, len(rules))
	for i, r := range rules {
		sev[i] = r.Severity
	}
	writeTable(bw, "", rows, sev, len(rows[0]), st)
	return bw.Flush()
}

// PrintExplain writes a rule's documentation: its heading, then what it
// finds, why it matters, the provider error it predicts and what `sessfix
// fix` does. Empty sections are left out.
func PrintExplain(w io.Writer, r *scan.Rule, st *Styles) error {
	bw := bufio.NewWriter(w)
	fix := "report only"
	if r.Fixable {
		fix = "fixable"
	}
	lower := ""
	if r.Lower != 0 {
		lower = " or " + st.Severity(r.Lower).Render(r.Lower.String())
	}
	fmt.Fprintf(bw, "%s %s (%s%s, %s)\n", st.Code.Render(r.Code), st.Title.Render(r.Name),
		st.Severity(r.Severity).Render(r.Severity.String()), lower, fix)
	if r.Lower != 0 {
		fmt.Fprintf(bw, "\n%s\n", indent(r.Lower.String()+" for "+r.LowerWhen))
	}
	if r.Summary != "" {
		fmt.Fprintf(bw, "\n%s\n", indent(r.Summary))
	}
	fixDoc := r.FixDoc
	if r.Fixable && r.Fix != "" {
		if fixDoc != "" {
			fixDoc += "\n"
		}
		fixDoc += "default repair: " + r.Fix
	}
	for _, sec := range []struct{ title, body string }{
		{"what it finds", r.What},
		{"why it matters", r.Why},
		{strings.ToLower(r.ErrorTitle()), r.ProviderError},
		{"fix", fixDoc},
	} {
		if strings.TrimSpace(sec.body) == "" {
			continue
		}
		fmt.Fprintf(bw, "\n%s\n%s\n", st.Header.Render(sec.title), indent(sec.body))
	}
	return bw.Flush()
}

// explainWidth is the column explain text wraps at, on a terminal or not,
// so the output is the same everywhere.
const explainWidth = 80

// indent indents s by two spaces and wraps each of its lines at
// explainWidth; words longer than a line are kept whole.
func indent(s string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if strings.TrimSpace(l) == "" {
			out = append(out, "")
			continue
		}
		line := ""
		for _, w := range strings.Fields(l) {
			if line != "" && len(line)+1+len(w) > explainWidth-2 {
				out = append(out, "  "+line)
				line = ""
			}
			if line != "" {
				line += " "
			}
			line += w
		}
		out = append(out, "  "+line)
	}
	return strings.Join(out, "\n")
}
