// Package reporttest checks sessfix's JSON documents against their
// contracts: every field path with its JSON type, as docs/json-output.md
// documents them in one table per document after its
// <!-- contract: NAME --> marker. Each command's tests check its own
// document; the scan document's contract lives here because fix's document
// embeds scan's findings.
package reporttest

import (
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// Contract maps every field of a document ("stores[].path") to its JSON
// type ("string", "number", "boolean", "array", "object").
type Contract map[string]string

// Documents are the documents docs/json-output.md marks as contracts.
var Documents = []string{"scan", "fix", "undo"}

// Scan is every field of `sessfix scan --format json`. It must match the
// output and docs/json-output.md: adding, removing or retyping a field fails
// the tests until all three agree. Its findings[] fields are also those of
// every finding another document embeds (fix's fixed[].finding).
var Scan = Contract{
	"version":                       "string",
	"schema_version":                "number",
	"stores":                        "array",
	"stores[].shape":                "string",
	"stores[].path":                 "string",
	"stores[].notes":                "array",
	"stores[].error":                "string",
	"stores[].sessions":             "array",
	"stores[].sessions[].id":        "string",
	"stores[].sessions[].title":     "string",
	"stores[].sessions[].messages":  "number",
	"stores[].sessions[].parts":     "number",
	"stores[].sessions[].findings":  "number",
	"findings":                      "array",
	"findings[].code":               "string",
	"findings[].rule":               "string",
	"findings[].severity":           "string",
	"findings[].message":            "string",
	"findings[].store":              "string",
	"findings[].shape":              "string",
	"findings[].session":            "string",
	"findings[].message_id":         "string",
	"findings[].part_id":            "string",
	"findings[].location":           "object",
	"findings[].location.path":      "string",
	"findings[].location.line":      "number",
	"findings[].location.table":     "string",
	"findings[].location.rowid":     "number",
	"findings[].fix":                "string",
	"findings[].fixable":            "boolean",
	"findings[].provider_error":     "string",
	"findings[].index":              "string",
	"findings[].error_type":         "string",
	"findings[].suppressed":         "boolean",
	"findings[].suppression_reason": "string",
	"summary":                       "object",
	"summary.total":                 "number",
	"summary.suppressed":            "number",
	"summary.by_severity":           "object",
	"summary.by_severity.error":     "number",
	"summary.by_severity.warning":   "number",
	"summary.by_severity.info":      "number",
	"summary.by_code":               "object",
	"summary.fixable":               "number",
	"summary.sessions":              "number",
	"summary.stores":                "number",
	"summary.fail_on":               "string",
	"summary.failing":               "number",
}

// openMaps are objects whose keys are data (rule codes), not fields.
var openMaps = map[string]bool{"summary.by_code": true}

// Type is the JSON type of a decoded value, as a Contract names it.
func Type(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}

// Fields returns the path and type of every field of a decoded document.
func Fields(doc map[string]any) map[string]string {
	out := map[string]string{}
	walk("", doc, out)
	return out
}

func walk(path string, v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		if openMaps[path] {
			return
		}
		for k, child := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			out[p] = Type(child)
			walk(p, child, out)
		}
	case []any:
		for _, child := range x {
			walk(path+"[]", child, out)
		}
	}
}

// Decode decodes one rendered JSON document; null anywhere fails the
// test.
func Decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("output is not one JSON document: %v\n%s", err, b)
	}
	if strings.Contains(string(b), "null") {
		t.Errorf("document contains null:\n%s", b)
	}
	return doc
}

// Check compares the fields of a decoded document with its contract. The
// fields under each of findings (paths of objects that hold a finding, as
// "sessions[].fixed[].finding") are those of Scan's findings[].
func Check(t *testing.T, name string, doc map[string]any, contract Contract, findings ...string) {
	t.Helper()
	got := Fields(doc)
	var problems []string
	for p, typ := range got {
		if f, ok := inside(p, findings); ok {
			if want := Scan["findings[]."+f]; want != typ {
				problems = append(problems, p+" is "+typ+", scan's findings[]."+f+" is "+want)
			}
			continue
		}
		want, ok := contract[p]
		switch {
		case !ok:
			problems = append(problems, "field not in the contract: "+p)
		case want != typ:
			problems = append(problems, p+" is "+typ+", contract says "+want)
		}
	}
	for p := range contract {
		if _, ok := got[p]; !ok {
			problems = append(problems, "contract field missing from output: "+p)
		}
	}
	for _, obj := range findings {
		if _, ok := contract[obj]; !ok {
			problems = append(problems, "finding object not in the contract: "+obj)
			continue
		}
		for p := range Scan {
			if f, ok := strings.CutPrefix(p, "findings[]."); ok {
				if _, ok := got[obj+"."+f]; !ok {
					problems = append(problems, "finding field missing from output: "+obj+"."+f)
				}
			}
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Errorf("%s: %s", name, p)
	}
}

// inside returns the path of p inside one of the finding objects.
func inside(p string, findings []string) (string, bool) {
	for _, obj := range findings {
		if f, ok := strings.CutPrefix(p, obj+"."); ok {
			return f, true
		}
	}
	return "", false
}

// CheckDocumented compares the contract of the document name with the table
// rows (| `path` | type | meaning |) that follow its marker in the markdown
// file at path (docs/json-output.md). Every marker must name one of
// Documents, once.
func CheckDocumented(t *testing.T, path, name string, contract Contract) {
	t.Helper()
	md, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	marker := regexp.MustCompile(`<!-- contract: (\w+) -->`)
	sections := marker.Split(string(md), -1)
	row := regexp.MustCompile("(?m)^\\| `([a-z_\\[\\].]+)` \\| ([a-z]+) \\|")
	seen := map[string]bool{}
	var documented map[string]string
	for i, m := range marker.FindAllStringSubmatch(string(md), -1) {
		switch {
		case !known(m[1]):
			t.Fatalf("%s marks an unknown contract %q", path, m[1])
		case seen[m[1]]:
			t.Fatalf("%s marks the contract %q twice", path, m[1])
		}
		seen[m[1]] = true
		if m[1] != name {
			continue
		}
		documented = map[string]string{}
		for _, r := range row.FindAllStringSubmatch(sections[i+1], -1) {
			documented[r[1]] = r[2]
		}
	}
	if documented == nil {
		t.Fatalf("%s has no contract marker for %s", path, name)
	}
	for p, typ := range contract {
		if documented[p] == "" {
			t.Errorf("%s does not document %s's %s", path, name, p)
		} else if documented[p] != typ {
			t.Errorf("%s says %s's %s is %s, contract says %s", path, name, p, documented[p], typ)
		}
	}
	for p := range documented {
		if _, ok := contract[p]; !ok {
			t.Errorf("%s documents %s's %s, which the output does not have", path, name, p)
		}
	}
}

func known(name string) bool {
	for _, d := range Documents {
		if d == name {
			return true
		}
	}
	return false
}
