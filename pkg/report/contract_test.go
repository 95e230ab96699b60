package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

// jsonContract is every field of `sessfix scan --format json`, with its JSON
// type. It must match the output and docs/json-output.md: adding, removing or
// retyping a field fails this test until all three agree.
var jsonContract = map[string]string{
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

func jsonType(v any) string {
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

// walk records the path and type of every field under v.
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
			out[p] = jsonType(child)
			walk(p, child, out)
		}
	case []any:
		for _, child := range x {
			walk(path+"[]", child, out)
		}
	}
}

func decode(t *testing.T, r *Report) map[string]any {
	t.Helper()
	out := render(t, "json", Options{}, r)
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("output is not one JSON document: %v\n%s", err, out)
	}
	return doc
}

func TestJSONNeverNull(t *testing.T) {
	empty := &Report{Version: "dev", Result: &scan.Result{Stores: []scan.StoreResult{{
		Info: store.Info{Shape: store.ShapeSQLite, Path: "/x/opencode.db"}, // Notes nil
	}}}}
	for name, r := range map[string]*Report{"empty": empty, "nil result": {}, "sample": sampleReport()} {
		out := render(t, "json", Options{}, r)
		if strings.Contains(out, "null") {
			t.Errorf("%s: output contains null:\n%s", name, out)
		}
	}
	doc := decode(t, empty)
	for _, key := range []string{"stores", "findings"} {
		if _, ok := doc[key].([]any); !ok {
			t.Errorf("%s is %T, want an array", key, doc[key])
		}
	}
	st := doc["stores"].([]any)[0].(map[string]any)
	for _, key := range []string{"notes", "sessions"} {
		if a, ok := st[key].([]any); !ok || len(a) != 0 {
			t.Errorf("stores[].%s = %v, want []", key, st[key])
		}
	}
	if m, ok := doc["summary"].(map[string]any)["by_code"].(map[string]any); !ok || len(m) != 0 {
		t.Errorf("summary.by_code = %v, want {}", doc["summary"].(map[string]any)["by_code"])
	}
}

func TestJSONValuesComeFromTheScan(t *testing.T) {
	r := sampleReport()
	doc := decode(t, r)
	fs := doc["findings"].([]any)
	if len(fs) != len(r.Result.Findings) {
		t.Fatalf("%d findings in JSON, %d in the scan", len(fs), len(r.Result.Findings))
	}
	for i, f := range r.Result.Findings {
		j := fs[i].(map[string]any)
		loc := j["location"].(map[string]any)
		if j["code"] != f.Code || j["severity"] != f.Severity.String() || j["session"] != f.SessionID ||
			j["part_id"] != f.PartID || loc["table"] != f.Location.Table || loc["rowid"] != float64(f.Location.RowID) ||
			j["fixable"] != (f.Fix != "") || j["store"] != f.StorePath || j["provider_error"] != f.ProviderError ||
			j["index"] != f.Index || j["error_type"] != f.ErrorType {
			t.Errorf("finding %d = %v, scan has %+v", i, j, f)
		}
	}
	sum := doc["summary"].(map[string]any)
	if sum["total"] != 6.0 || sum["fixable"] != 5.0 || sum["failing"] != 5.0 || sum["fail_on"] != "warning" {
		t.Errorf("summary = %v", sum)
	}
	if bc := sum["by_code"].(map[string]any); bc["SF103"] != 2.0 || bc["SF302"] != 1.0 || len(bc) != 5 {
		t.Errorf("by_code = %v", bc)
	}
}
