package plandoc

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/report"
	"github.com/sessfix/sessfix/pkg/report/reporttest"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/sqlite/salvage"
)

// fixContract is every field of `sessfix fix --format json`, like
// reporttest.Scan (scan's). A finding inside it (fixed[].finding,
// unfixed[].finding) has exactly the fields of scan's findings[].
var fixContract = reporttest.Contract{
	"version":                            "string",
	"schema_version":                     "number",
	"written":                            "boolean",
	"stores":                             "array",
	"stores[].shape":                     "string",
	"stores[].path":                      "string",
	"stores[].error":                     "string",
	"stores[].backup_run":                "string",
	"sessions":                           "array",
	"sessions[].store":                   "string",
	"sessions[].shape":                   "string",
	"sessions[].id":                      "string",
	"sessions[].title":                   "string",
	"sessions[].outcome":                 "string",
	"sessions[].error":                   "string",
	"sessions[].forced":                  "boolean",
	"sessions[].in_use":                  "string",
	"sessions[].backup_run":              "string",
	"sessions[].edits":                   "array",
	"sessions[].edits[].op":              "string",
	"sessions[].edits[].kind":            "string",
	"sessions[].edits[].record":          "string",
	"sessions[].edits[].new_id":          "string",
	"sessions[].edits[].message_id":      "string",
	"sessions[].edits[].location":        "object",
	"sessions[].edits[].location.path":   "string",
	"sessions[].edits[].location.line":   "number",
	"sessions[].edits[].location.table":  "string",
	"sessions[].edits[].location.rowid":  "number",
	"sessions[].edits[].rule":            "string",
	"sessions[].edits[].mutation":        "string",
	"sessions[].edits[].reason":          "string",
	"sessions[].fixed":                   "array",
	"sessions[].fixed[].finding":         "object",
	"sessions[].fixed[].strategy":        "string",
	"sessions[].fixed[].mutations":       "string",
	"sessions[].fixed[].edits":           "number",
	"sessions[].unfixed":                 "array",
	"sessions[].unfixed[].finding":       "object",
	"sessions[].unfixed[].reason":        "string",
	"sessions[].unfixed[].failing":       "boolean",
	"sessions[].notes":                   "array",
	"databases":                          "array",
	"databases[].store":                  "string",
	"databases[].rule":                   "string",
	"databases[].mutation":               "string",
	"databases[].finding":                "object",
	"databases[].outcome":                "string",
	"databases[].error":                  "string",
	"databases[].backup_run":             "string",
	"databases[].lost":                   "object",
	"databases[].lost.sessions":          "array",
	"databases[].lost.messages":          "array",
	"databases[].lost.parts":             "array",
	"databases[].lost.affected_sessions": "array",
	"databases[].lost.rows":              "number",
	"databases[].lost.exact":             "boolean",
	"databases[].lost.method":            "string",
	"summary":                            "object",
	"summary.sessions":                   "number",
	"summary.planned":                    "number",
	"summary.applied":                    "number",
	"summary.skipped_busy":               "number",
	"summary.failed":                     "number",
	"summary.edits":                      "number",
	"summary.fixed":                      "number",
	"summary.unfixed":                    "number",
	"summary.fail_on":                    "string",
	"summary.failing":                    "number",
}

// findingObjects are the fields of fix's document that hold a finding as
// scan's findings[] does.
var findingObjects = []string{"sessions[].fixed[].finding", "sessions[].unfixed[].finding", "databases[].finding"}

// sampleFixRun is a fix run over two stores and an input that could not
// be opened: a session written, one skipped as busy, one whose write
// failed, one that could not be loaded, one that changes nothing but
// keeps a finding.
func sampleFixRun() *FixRun {
	db := store.Info{Shape: store.ShapeSQLite, Path: "/data/opencode/opencode.db", Notes: []string{}}
	exp := store.Info{Shape: store.ShapeExport, Path: "/tmp/ses.json"}
	finding := func(in store.Info, code, rule string, sev scan.Severity, msg, ses, m, p string, loc store.Location, fix string) scan.Finding {
		return scan.Finding{Code: code, Rule: rule, Severity: sev, Message: msg, Store: in, StorePath: in.Path, Shape: in.Shape,
			SessionID: ses, MessageID: m, PartID: p, Location: loc, Fix: fix}
	}
	fs := []scan.Finding{
		finding(db, "SF103", "thinking-not-first", scan.Error, "reasoning part comes after a text part", "ses_a", "msg_1", "prt_2",
			store.Location{Path: db.Path, Table: "part", RowID: 42}, "moveThinkingFirst"),
		finding(db, "SF104", "empty-text-part", scan.Warning, "text part is whitespace-only", "ses_a", "msg_1", "prt_3",
			store.Location{Path: db.Path, Table: "part", RowID: 43}, "replaceEmptyTextParts"),
		finding(exp, "SF101", "empty-message", scan.Warning, "assistant message has no content part", "ses_e", "msg_5", "",
			store.Location{Path: exp.Path, Line: 88}, "injectTextPart"),
	}
	dbStore, expStore := infoStore{info: db}, infoStore{info: exp}
	edit := store.Edit{Op: store.OpUpdate, Kind: store.KindPart, ID: "prt_2", SessionID: "ses_a", MessageID: "msg_1",
		Loc: store.Location{Path: db.Path, Table: "part", RowID: 42}, Rule: "SF103", Mutation: "moveThinkingFirst", Reason: "thinking moved first"}
	plan := func(id string, edits ...store.Edit) *fix.SessionPlan {
		p := &fix.SessionPlan{Store: db, SessionID: id, Notes: []string{"a note"}}
		if len(edits) > 0 {
			p.Changes = &store.ChangeSet{Store: db, SessionID: id, Edits: edits}
		}
		return p
	}
	applied := plan("ses_a", edit)
	applied.Fixed = []fix.Repair{{Finding: fs[0], Strategy: "move", Mutations: "moveThinkingFirst", Edits: 1}}
	applied.Unfixed = []fix.Unfixed{{Finding: fs[1], Reason: "suppressed by the user"}}
	kept := plan("ses_e")
	kept.Unfixed = []fix.Unfixed{{Finding: fs[2], Reason: "no strategy fixes it"}}
	return &FixRun{
		Version: "1.2.3", Written: true,
		Stores: []store.Info{db, exp, {Path: "notes.txt"}},
		Errs:   map[string]error{exp.Path: errors.New("cannot write /tmp/ses.json: permission denied"), "notes.txt": errors.New("notes.txt is not an sqlite database")},
		Runs:   map[string]string{db.Path: "20261121T153000Z-k3x9qa"},
		Sessions: []fix.Outcome{
			{Target: fix.Target{Store: dbStore}, ID: "ses_a", Title: "fix the build", Status: fix.Applied, Plan: applied, Run: "20261121T153000Z-k3x9qa"},
			{Target: fix.Target{Store: dbStore}, ID: "ses_b", Status: fix.SkippedBusy, Plan: plan("ses_b", edit),
				Use: opencode.Use{InUse: true, Why: "its last assistant message is unfinished and the session changed 1s ago"}},
			{Target: fix.Target{Store: expStore}, ID: "ses_e", Status: fix.Planned, Plan: kept},
			{Target: fix.Target{Store: expStore}, ID: "ses_f", Status: fix.Failed, Step: fix.StepWrite, Plan: plan("ses_f", edit), Err: errors.New("cannot write /tmp/ses.json: permission denied")},
			{Target: fix.Target{Store: dbStore}, ID: "ses_g", Status: fix.Failed, Step: fix.StepLoad, Err: errors.New("record is not JSON")},
		},
		Databases: []*fix.DatabaseRepair{{Store: db, Rule: "SF501", Mutation: fix.MutSalvageDatabase, Run: "20261121T153001Z-a1b2c3",
			Finding: finding(db, "SF501", "damaged-database", scan.Error, "the database is damaged", "", "", "", store.Location{Path: db.Path}, "salvageDatabase|reindexDatabase"),
			Salvage: &salvage.Report{Method: salvage.MethodSQL, Tables: []salvage.TableReport{{Name: "part", Read: 490,
				Lost: []salvage.Range{{From: 100, To: 113, Rows: 14, IDs: []string{"prt_9"}, SessionIDs: []string{"ses_a"}, MessageIDs: []string{"msg_1"}}}}}},
		}},
	}
}

// infoStore is a store.Store that only knows its Info: all a document
// needs.
type infoStore struct {
	store.Store
	info store.Info
}

func (s infoStore) Info() store.Info { return s.info }

// decodeJSON renders v as the commands do and decodes it.
func decodeJSON(t *testing.T, v any) map[string]any {
	t.Helper()
	var b bytes.Buffer
	if err := report.WriteJSON(&b, v); err != nil {
		t.Fatal(err)
	}
	return reporttest.Decode(t, b.Bytes())
}

// TestFixFieldSetMatchesContract: fix's document has exactly the fields
// of its contract, and docs/json-output.md documents them.
func TestFixFieldSetMatchesContract(t *testing.T) {
	reporttest.Check(t, "fix", decodeJSON(t, NewFixDocument(sampleFixRun())), fixContract, findingObjects...)
	reporttest.CheckDocumented(t, "../../../docs/json-output.md", "fix", fixContract)
}

// TestFixDocumentSaysWhatHappened: outcomes, counts, runs and errors come
// from the run.
func TestFixDocumentSaysWhatHappened(t *testing.T) {
	d := NewFixDocument(sampleFixRun())
	var outcomes []string
	for _, s := range d.Sessions {
		outcomes = append(outcomes, s.ID+"="+s.Outcome)
	}
	if got := strings.Join(outcomes, " "); got != "ses_a=applied ses_b=skipped-busy ses_e=unchanged ses_f=failed ses_g=failed" {
		t.Errorf("outcomes %s", got)
	}
	a := d.Sessions[0]
	if a.BackupRun != "20261121T153000Z-k3x9qa" || len(a.Edits) != 1 || a.Edits[0].Record != "prt_2" || a.Edits[0].Location.RowID != 42 ||
		a.Edits[0].Mutation != "moveThinkingFirst" || len(a.Fixed) != 1 || a.Fixed[0].Finding.Code != "SF103" ||
		len(a.Unfixed) != 1 || !a.Unfixed[0].Failing || a.Notes[0] != "a note" {
		t.Errorf("applied session %+v", a)
	}
	if b := d.Sessions[1]; b.InUse != "its last assistant message is unfinished and the session changed 1s ago" || a.InUse != "" {
		t.Errorf("why a session is in use: %q, %q", b.InUse, a.InUse)
	}
	if d.Sessions[3].Error == "" || d.Sessions[4].Error != "record is not JSON" {
		t.Errorf("failed sessions %+v", d.Sessions[3:])
	}
	want := FixTotals{Sessions: 5, Planned: 0, Applied: 1, SkippedBusy: 1, Failed: 2, Edits: 3, Fixed: 1, Unfixed: 2, FailOn: "warning", Failing: 2}
	if d.Summary != want {
		t.Errorf("summary %+v, want %+v", d.Summary, want)
	}
	if d.Stores[0].BackupRun == "" || d.Stores[1].Error == "" || d.Stores[2].Shape != "" || d.Stores[2].Error == "" {
		t.Errorf("stores %+v", d.Stores)
	}
}
