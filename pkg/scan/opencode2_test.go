package scan

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// The OpenCode 2 fixtures (testdata/opencode2) and what each rule reports
// on them; the databases are copied, damaged where a case needs it, and
// scanned through the registry like any store.

const (
	plainSession = "ses_e012acd97ffeUavLGQWWTi4jHW" // imported; a user message and its answer
	plainUser    = "msg_1fed5361d001QlOpfHagQSBZKN"
	plainText    = "prt_1fed536360019Njp4fBxHKZClK"
	plainAnswer  = "prt_1fed54cb3001lWExXDaIbvfo1U"
	laterSession = "ses_df6a72717ffeAfterImport2Ua" // written by 1.x after the import: a copy of the plain one
	laterText    = "prt_20958dcb6001AfterImport29N"
	importedAt   = int64(1795363200000) // after-import's kv time
)

func oc2Fixture(t *testing.T, name string, stmts ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "opencode2", name, "opencode.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "opencode.db")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if len(stmts) > 0 {
		storetest.ExecSQL(t, path, append([]string{"PRAGMA foreign_keys = OFF"}, stmts...)...)
	}
	return path
}

func scanOC2(t *testing.T, path string) []Finding {
	t.Helper()
	st := storetest.OpenOne(t, path)
	if st.Info().Shape != store.ShapeSQLite2 {
		t.Fatalf("%s opened as %s", path, st.Info().Shape)
	}
	res, err := Run(context.Background(), []store.Store{st}, &Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	return res.Findings
}

// line is one finding as the tests compare it.
func line(f Finding) string {
	return strings.Join([]string{f.Code, f.Severity.String(), f.SessionID, f.MessageID, f.PartID, f.Location.Table}, " ")
}

func lines(fs []Finding, codes ...string) []string {
	var out []string
	for _, f := range fs {
		if len(codes) == 0 || slices.Contains(codes, f.Code) {
			out = append(out, line(f))
		}
	}
	sort.Strings(out)
	return out
}

func wantLines(t *testing.T, got []string, want ...string) {
	t.Helper()
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("findings\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestOpenCode2AfterImport(t *testing.T) {
	fs := scanOC2(t, oc2Fixture(t, "after-import"))
	wantLines(t, lines(fs),
		"SF401 warning ses_df6a72717ffeAfterImport2Ua   session",
		"SF401 warning ses_df6dde7bfffeAfterImport1Kt   session",
		"SF403 warning ses_e012a6510ffemP4Gukdz1ZnYpe   session_v2",
		"SF403 warning ses_e012a9fbfffeKtIFkrDCzeMk55   session_v2",
		"SF403 warning ses_e012acd97ffeUavLGQWWTi4jHW   session_v2",
	)
	for _, f := range fs {
		if f.Code == "SF401" && !strings.Contains(f.Message, "after opencode 2 imported the 1.x sessions (2026-11-22 16:00 UTC)") {
			t.Errorf("SF401 says %q", f.Message)
		}
	}
}

// Every row the importer skipped (import-warnings.json, which the fixture
// generator logged) is an SF402 finding, and nothing else is.
func TestOpenCode2RejectedRows(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "opencode2", "rejected-rows", "import-warnings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var warnings []struct{ Reason, MessageID, PartID string }
	if err := json.Unmarshal(b, &warnings); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, w := range warnings {
		if w.Reason == "reassigned-project" {
			continue
		}
		if w.PartID != "" {
			want = append(want, w.MessageID+" "+w.PartID)
		} else {
			want = append(want, w.MessageID+" ")
		}
	}
	fs := scanOC2(t, oc2Fixture(t, "rejected-rows"))
	var got []string
	for _, f := range fs {
		if f.Code != "SF402" {
			continue
		}
		if f.Severity != Warning || f.Fix != "" || !strings.HasPrefix(f.Message, "opencode 2's import skipped this") {
			t.Errorf("SF402 %s: %s %q", f.Severity, f.Fix, f.Message)
		}
		got = append(got, f.MessageID+" "+f.PartID)
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Fatalf("SF402 on\n  %s\nthe importer skipped\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	byMessage := map[string]string{}
	for _, f := range fs {
		if f.Code == "SF402" && f.PartID == "" {
			byMessage[f.MessageID] = f.Message
		}
	}
	for id, want := range map[string]string{
		"msg_209225f30001RejectedMultiX": "rejects tokens: missing key; its 4 parts go with it",
		"msg_209229133001RejectedMulti5": "its data is not a JSON object; its 1 part goes with it",
		"msg_20958dc9d001RejectedNoMode": "rejects model: missing key (its own patch found no model to fill in)",
	} {
		if !strings.Contains(byMessage[id], want) {
			t.Errorf("%s: %q, want it to say %q", id, byMessage[id], want)
		}
	}
	// The 1.x rules' findings in the frozen copies are info, without a fix.
	for _, f := range fs {
		if f.Location.Table == "message" || f.Location.Table == "part" {
			if f.Code != "SF402" && (f.Severity != Info || f.Fix != "" || !strings.Contains(f.Message, "in the frozen 1.x copy")) {
				t.Errorf("finding in a frozen copy: %s", line(f))
			}
		}
	}
}

func TestOpenCode2Native(t *testing.T) {
	fs := scanOC2(t, oc2Fixture(t, "native"))
	wantLines(t, lines(fs),
		"SF403 warning ses_dfffa0002000NativeGlobal01   session_v2",
		"SF404 info ses_dfffa0000000NativeMain0001 msg_20a4b000a000NativeIdle0001  session_message",
	)
}

// The 1.x rules never read OpenCode 2's rows: they would take them for
// broken 1.x records. SF404 reports what sessfix does not understand.
func TestOpenCode2RowsAreNotJudgedAsOpenCode1(t *testing.T) {
	path := oc2Fixture(t, "native",
		`UPDATE session_message SET data = '{"text": "cut' WHERE id = 'msg_20a4b0003000NativeSystem01'`,
		`UPDATE session_message SET type = 'location-switched' WHERE id = 'msg_20a4b0005000NativeShell001'`,
		`UPDATE session_message SET data = json_set(data, '$.content[0].type', 'thinking', '$.content[3].state.status', 'cancelled')
			WHERE id = 'msg_20a4b0004000NativeAsst0001'`,
		`UPDATE session_message SET data = json_set(data, '$.content', 'none') WHERE id = 'msg_20a4b0008000NativeAsst0002'`,
	)
	fs := scanOC2(t, path)
	wantLines(t, lines(fs, "SF404"),
		"SF404 info ses_dfffa0000000NativeMain0001 msg_20a4b0003000NativeSystem01  session_message",
		"SF404 info ses_dfffa0000000NativeMain0001 msg_20a4b0004000NativeAsst0001 rs_1 session_message",
		"SF404 info ses_dfffa0000000NativeMain0001 msg_20a4b0004000NativeAsst0001 toolu_01NativeRead00001 session_message",
		"SF404 info ses_dfffa0000000NativeMain0001 msg_20a4b0005000NativeShell001  session_message",
		"SF404 info ses_dfffa0000000NativeMain0001 msg_20a4b0008000NativeAsst0002  session_message",
		"SF404 info ses_dfffa0000000NativeMain0001 msg_20a4b000a000NativeIdle0001  session_message",
	)
	for _, f := range fs {
		if f.Code != "SF403" && f.Code != "SF404" {
			t.Errorf("a 1.x rule judged an OpenCode 2 row: %s %q", line(f), f.Message)
		}
	}
}

// A 1.x defect keeps its severity where OpenCode 1.x still uses the rows,
// and is info in a frozen copy OpenCode 2 never reads again.
func TestOpenCode2FrozenCopies(t *testing.T) {
	blank := func(id string) string {
		return `UPDATE part SET data = json_set(data, '$.text', ' ') WHERE id = '` + id + `'`
	}
	fs := scanOC2(t, oc2Fixture(t, "after-import", blank(plainText), blank(laterText)))
	var frozen, live []Finding
	for _, f := range fs {
		switch {
		case f.PartID == plainText:
			frozen = append(frozen, f)
		case f.PartID == laterText:
			live = append(live, f)
		}
	}
	if len(frozen) == 0 || len(live) == 0 {
		t.Fatalf("findings on the blanked parts: frozen %v, live %v", frozen, live)
	}
	for _, f := range frozen {
		if f.Severity != Info || f.Fix != "" || !strings.HasSuffix(f.Message, "; in the frozen 1.x copy, which opencode 2 no longer reads (its imported copy may hold the same, which sessfix does not check)") {
			t.Errorf("in the frozen copy: %s %q fix %q", line(f), f.Message, f.Fix)
		}
	}
	for _, f := range live {
		if f.Severity != Error || f.Fix == "" || strings.Contains(f.Message, "1.x copy") {
			t.Errorf("in a session only 1.x has: %s %q fix %q", line(f), f.Message, f.Fix)
		}
	}
}

// OpenCode 1.x kept writing an imported session after the import: what it
// wrote is not in OpenCode 2 (SF401), and the copy is no longer frozen.
func TestOpenCode2ContinuedAfterImport(t *testing.T) {
	path := oc2Fixture(t, "after-import",
		`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_2092260000010ContinuedIn1x', '`+plainSession+`', 1795400000000, 1795400000000, '{"role":"user","time":{"created":1795400000000},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}')`,
		`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_2092260000020ContinuedIn1x', 'msg_2092260000010ContinuedIn1x', '`+plainSession+`', 1795400000000, 1795400000000, '{"type":"text","text":""}')`,
		`UPDATE part SET data = json_set(data, '$.text', ' ') WHERE id = '`+plainAnswer+`'`,
	)
	fs := scanOC2(t, path)
	live := 0
	for _, f := range fs {
		if f.PartID == plainAnswer && f.Severity == Error {
			live++
		}
	}
	if live == 0 {
		t.Errorf("no error on the blanked answer of a copy OpenCode 1.x still writes: %v", lines(fs))
	}
	var sf401 []Finding
	for _, f := range fs {
		if f.SessionID != plainSession {
			continue
		}
		switch {
		case f.Code == "SF401":
			sf401 = append(sf401, f)
		case f.Code != "SF403" && (!strings.HasSuffix(f.Message, "; in the 1.x copy, which opencode 1.x changed after opencode 2 imported it")):
			t.Errorf("in a copy changed after the import: %s %q", line(f), f.Message)
		}
	}
	if len(sf401) != 1 || sf401[0].MessageID != "msg_2092260000010ContinuedIn1x" || sf401[0].Location.Table != "message" ||
		!strings.HasPrefix(sf401[0].Message, "1 message that opencode 1.x wrote to this session after opencode 2 imported it (2026-11-22 16:00 UTC) is not in opencode 2") {
		t.Fatalf("SF401 %v", sf401)
	}
}

// A 1.x session older than the import that OpenCode 2 does not have was
// most likely deleted there: info.
func TestOpenCode2DeletedInOpenCode2(t *testing.T) {
	fs := scanOC2(t, oc2Fixture(t, "after-import",
		`DELETE FROM session_message WHERE session_id = '`+plainSession+`'`,
		`DELETE FROM session_v2 WHERE id = '`+plainSession+`'`))
	wantLines(t, lines(fs, "SF401"),
		"SF401 info "+plainSession+"   session",
		"SF401 warning ses_df6a72717ffeAfterImport2Ua   session",
		"SF401 warning ses_df6dde7bfffeAfterImport1Kt   session",
	)
}

// Before the import has completed nothing is missing yet: SF402 says what
// it will skip in the sessions it has yet to copy.
func TestOpenCode2ImportUnfinished(t *testing.T) {
	multi, noModel := "ses_df6ddad10ffeRejectedMultim", "ses_df6a72717ffeRejectedNoMode"
	path := oc2Fixture(t, "rejected-rows",
		`UPDATE kv SET value = '{"phase":"sessions","cursor":"ses_e012acd97ffeUavLGQWWTi4jHW"}' WHERE key = 'migration.v1-v2'`,
		`DELETE FROM session_message WHERE session_id IN ('`+multi+`', '`+noModel+`')`,
		`DELETE FROM session_v2 WHERE id IN ('`+multi+`', '`+noModel+`')`)
	st := storetest.OpenOne(t, path)
	if notes := st.Info().Notes; len(notes) != 1 || !strings.Contains(notes[0], "has not finished (it reached session ses_e012acd97ffeUavLGQWWTi4jHW)") {
		t.Errorf("notes %q", notes)
	}
	fs := scanOC2(t, path)
	n := 0
	for _, f := range fs {
		switch f.Code {
		case "SF401":
			t.Errorf("SF401 before the import has completed: %s", line(f))
		case "SF402":
			if f.SessionID == multi || f.SessionID == noModel {
				n++
				if !strings.HasPrefix(f.Message, "opencode 2's import will skip this") {
					t.Errorf("SF402 %q", f.Message)
				}
			}
		}
		if (f.SessionID == multi || f.SessionID == noModel) && strings.Contains(f.Message, "1.x copy") {
			t.Errorf("a session only 1.x has is not a copy: %q", f.Message)
		}
	}
	if n != 4 {
		t.Errorf("%d SF402 findings in the sessions still to import, want 4", n)
	}
}
