package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/report/reporttest"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

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
	if sum["total"] != 7.0 || sum["fixable"] != 5.0 || sum["failing"] != 5.0 || sum["fail_on"] != "warning" {
		t.Errorf("summary = %v", sum)
	}
	if bc := sum["by_code"].(map[string]any); bc["SF103"] != 2.0 || bc["SF302"] != 1.0 || bc["SF504"] != 1.0 || len(bc) != 6 {
		t.Errorf("by_code = %v", bc)
	}
}

// TestJSONFieldSetMatchesContract: scan's document has exactly the fields
// of its contract (reporttest.Scan), and docs/json-output.md documents
// them.
func TestJSONFieldSetMatchesContract(t *testing.T) {
	reporttest.Check(t, "scan", decode(t, sampleReport()), reporttest.Scan)
	reporttest.CheckDocumented(t, "../../docs/json-output.md", "scan", reporttest.Scan)
}
