//go:build acceptance

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/golden"
)

// wedgedHeading starts docs/compatibility.md's section on the sessions
// the single-case end-to-end tests break: wedged mid-turn, killed by their
// size, or on another build of OpenCode.
const wedgedHeading = "\n## Sessions wedged mid-turn or by their size\n"

// wedgedRow is one such test's real run, as its row in that section.
// Each test keeps its row in e2e/testdata/wedged/<case>.json and fails
// when a run differs from it; TestCompatibility renders the section from
// those files.
type wedgedRow struct {
	// Case names the test's case; Test is the test that runs it.
	Case string `json:"case"`
	Test string `json:"test"`
	// OpenCode is the version, Model the provider/model resumed.
	OpenCode string `json:"opencode"`
	Model    string `json:"model"`
	// Break is how the session broke; what a real run did and what, if
	// anything, the test edited.
	Break string `json:"break"`
	// Before is the resume before the fix; Scan the codes scan reported
	// then (with the severity of those below error); Fix the mutations
	// `sessfix fix --yes` wrote; After the resume after it.
	Before string `json:"before"`
	Scan   string `json:"scan"`
	Fix    string `json:"fix"`
	After  string `json:"after"`
	// First is the same session repaired before any resume, where the
	// test runs that timing too.
	First *firstRow `json:"first,omitempty"`
}

// firstRow is a session repaired before any resume: what scan reported
// from the stored history, what `sessfix fix --yes` wrote, and the first
// resume after it.
type firstRow struct {
	Scan  string `json:"scan"`
	Fix   string `json:"fix"`
	After string `json:"after"`
}

// String is the row's cell: scan, fix, after.
func (f *firstRow) String() string {
	if f == nil {
		return "not run"
	}
	return f.Scan + "; " + cell(f.Fix) + "; " + cell(f.After)
}

// recordWedged checks the test's row against its file (rewriting it, and
// the section of docs/compatibility.md, with -update).
func recordWedged(t *testing.T, row wedgedRow) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(row); err != nil {
		t.Fatal(err)
	}
	dir := wedgedDir(t)
	if golden.Update() {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	golden.Check(t, filepath.Join(dir, row.Case+".json"), b.String())
	if !golden.Update() {
		return
	}
	rows, err := loadWedged()
	if err != nil {
		t.Fatal(err)
	}
	var sec bytes.Buffer
	renderWedged(&sec, rows)
	path := filepath.Join(dir, "..", "..", "..", "docs", "compatibility.md") // dir is <root>/e2e/testdata/wedged
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, spliceSection(old, wedgedHeading, sec.Bytes()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func wedgedDir(t *testing.T) string {
	t.Helper()
	root, err := opencodetest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "e2e", "testdata", "wedged")
}

// loadWedged reads every row kept in e2e/testdata/wedged, by case name.
func loadWedged() ([]wedgedRow, error) {
	root, err := opencodetest.RepoRoot()
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(root, "e2e", "testdata", "wedged", "*.json"))
	if err != nil {
		return nil, err
	}
	var rows []wedgedRow
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var r wedgedRow
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Case < rows[j].Case })
	return rows, nil
}

// renderWedged writes the section.
func renderWedged(b *bytes.Buffer, rows []wedgedRow) {
	if len(rows) == 0 {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("%s\n", wedgedHeading)
	p("Each row is one end-to-end test (named in the list below) on real OpenCode against the strict mock of the\n")
	p("provider: the break is made by a real run wherever one can make it, and the list says what the test edits when\n")
	p("not. **before** is the resume before the fix, **scan** what `sessfix scan` reported then, **fix** the mutations\n")
	p("`sessfix fix --yes` (default flags, right after the failed resume) wrote, **after** the next resume. **before any\n")
	p("resume** is the other timing, where the test runs it: a copy of the store as the break left it, before a resume\n")
	p("added a failed attempt (a tool's image fails the very turn that read it: that attempt is in the copy), scanned,\n")
	p("fixed with `fix --yes` (undo checked to restore it exactly), and the first resume after (scan; fix; after). A test\n")
	p("fails when its run differs from its row (`e2e/testdata/wedged/`).\n\n")
	p("| case | OpenCode | model | before | scan | fix | after | before any resume |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		p("| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Case, r.OpenCode, r.Model, cell(r.Before), r.Scan, cell(r.Fix), cell(r.After), r.First)
	}
	p("\nThe cases:\n\n")
	for _, r := range rows {
		p("- `%s` (`%s`): %s.\n", r.Case, r.Test, r.Break)
	}
}

// rejectedAs is a verdict cell: "rejected: “ text “", or "accepted".
func rejectedAs(text string) string {
	if text == "" {
		return "accepted"
	}
	return "rejected: `` " + hideIDs(text) + " ``"
}

// mutationRe finds the mutations in fix's plan lines ("fix SF151 …:
// replace (replaceEmptyTextParts), 1 edit").
var mutationRe = regexp.MustCompile(`\(([A-Za-z]+(?:\+[A-Za-z]+)*)\), \d+ edits?`)

// wroteMutations lists the mutations `sessfix fix` printed it wrote, sorted.
func wroteMutations(out string) string {
	seen := map[string]bool{}
	var names []string
	for _, m := range mutationRe.FindAllStringSubmatch(out, -1) {
		for _, name := range strings.Split(m[1], "+") {
			if !seen[name] {
				seen[name] = true
				names = append(names, "`"+name+"`")
			}
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
