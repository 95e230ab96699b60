package undo

import (
	"bytes"
	"testing"

	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/report"
	"github.com/sessfix/sessfix/pkg/report/reporttest"
	"github.com/sessfix/sessfix/pkg/store"
)

// undoContract is every field of `sessfix undo --format json`.
var undoContract = reporttest.Contract{
	"version":                       "string",
	"schema_version":                "number",
	"run":                           "string",
	"store":                         "object",
	"store.shape":                   "string",
	"store.path":                    "string",
	"outcome":                       "string",
	"error":                         "string",
	"forced":                        "boolean",
	"restored":                      "array",
	"restored[].kind":               "string",
	"restored[].id":                 "string",
	"restored[].path":               "string",
	"restored[].table":              "string",
	"unchanged":                     "number",
	"refused":                       "array",
	"refused[].record":              "object",
	"refused[].record.kind":         "string",
	"refused[].record.id":           "string",
	"refused[].record.path":         "string",
	"refused[].record.table":        "string",
	"refused[].reason":              "string",
	"operation":                     "string",
	"runs":                          "array",
	"runs[].run":                    "string",
	"runs[].store":                  "object",
	"runs[].store.shape":            "string",
	"runs[].store.path":             "string",
	"runs[].outcome":                "string",
	"runs[].error":                  "string",
	"runs[].forced":                 "boolean",
	"runs[].restored":               "array",
	"runs[].restored[].kind":        "string",
	"runs[].restored[].id":          "string",
	"runs[].restored[].path":        "string",
	"runs[].restored[].table":       "string",
	"runs[].unchanged":              "number",
	"runs[].refused":                "array",
	"runs[].refused[].record":       "object",
	"runs[].refused[].record.kind":  "string",
	"runs[].refused[].record.id":    "string",
	"runs[].refused[].record.path":  "string",
	"runs[].refused[].record.table": "string",
	"runs[].refused[].reason":       "string",
}

func sampleUndo() *UndoDocument {
	info := store.Info{Shape: store.ShapeSQLite, Path: "/data/opencode/opencode.db"}
	res := &backup.UndoResult{RunID: "20261121T153000Z-k3x9qa", Store: info,
		Restored:  []store.Target{{Kind: store.KindPart, ID: "prt_2", Path: info.Path, Table: "part"}},
		Unchanged: 1,
		Refused:   []backup.Refusal{{Target: store.Target{Kind: store.KindPart, ID: "prt_2", Path: info.Path, Table: "part"}, Reason: "it was modified after sessfix wrote it"}},
	}
	return NewUndoDocument("1.2.3", "last", res, true, nil)
}

// decodeJSON renders v as the commands do and decodes it.
func decodeJSON(t *testing.T, v any) map[string]any {
	t.Helper()
	var b bytes.Buffer
	if err := report.WriteJSON(&b, v); err != nil {
		t.Fatal(err)
	}
	return reporttest.Decode(t, b.Bytes())
}

// TestUndoFieldSetMatchesContract: undo's document has exactly the fields
// of its contract, and docs/json-output.md documents them.
func TestUndoFieldSetMatchesContract(t *testing.T) {
	reporttest.Check(t, "undo", decodeJSON(t, sampleUndo()), undoContract)
	reporttest.CheckDocumented(t, "../../docs/json-output.md", "undo", undoContract)
}

func TestUndoDocumentOutcomes(t *testing.T) {
	res := &backup.UndoResult{RunID: "r1", Store: store.Info{Shape: store.ShapeExport, Path: "/x.json"}}
	for _, c := range []struct {
		res  *backup.UndoResult
		err  error
		want string
	}{
		{res, nil, OutcomeUndone},
		{&backup.UndoResult{RunID: "r1", AlreadyUndone: true}, nil, OutcomeAlreadyUndone},
		{res, &backup.RefusedError{RunID: "r1"}, OutcomeRefused},
		{nil, backup.ErrNoRun, OutcomeFailed},
	} {
		d := NewUndoDocument("1", "r1", c.res, false, c.err)
		if d.Outcome != c.want || (c.err != nil) != (d.Error != "") || d.Run != "r1" {
			t.Errorf("%v %v: %+v, want outcome %s", c.res, c.err, d, c.want)
		}
	}
	if d := sampleUndo(); !d.Forced || d.Restored[0].Table != "part" || d.Refused[0].Reason == "" || d.Unchanged != 1 {
		t.Errorf("undo document %+v", d)
	}
}
