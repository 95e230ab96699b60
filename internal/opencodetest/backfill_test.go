//go:build acceptance

package opencodetest_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/pkg/ocschema"
)

// Tool states and a retry the recording lacks, added to the tool-loop
// session's tool step (ids sort after its completed tool, before its
// step-finish), the way OpenCode writes them: pending before the input
// streams in, running, failed, and a retried API error.
const (
	loopToolMsg = "msg_1fed566740018NRjDoOtvRNJUB"
	loopPartT   = int64(1795276765500)
)

var loopExtraParts = []struct{ id, data string }{
	{"prt_1fed5782d002PendingTool001", `{"type":"tool","tool":"bash","callID":"toolu_01PendingPendingPending","state":{"status":"pending","input":{},"raw":""}}`},
	{"prt_1fed5782d003RunningTool001", `{"type":"tool","tool":"bash","callID":"toolu_01RunningRunningRunning","state":{"status":"running","input":{"command":"sleep 1","description":"Wait"},"title":"Wait","metadata":{},"time":{"start":1795276765450}}}`},
	{"prt_1fed5782d004FailedTool0001", `{"type":"tool","tool":"read","callID":"toolu_01FailedFailedFailedF","state":{"status":"error","input":{"filePath":"/nonexistent"},"error":"File not found: /nonexistent","metadata":{},"time":{"start":1795276765460,"end":1795276765470}}}`},
	{"prt_1fed5782d005RetryPart00001", `{"type":"retry","attempt":1,"error":{"name":"APIError","data":{"message":"Overloaded","statusCode":529,"isRetryable":true}},"time":{"created":1795276765480}}`},
}

// defaultable lists the keys of a record that have a default and are
// present, as sjson paths with their default; a key under another listed
// key is left out when topmost is set.
func defaultable(body gjson.Result, object, prefix string, topmost bool) []struct {
	path string
	d    *ocschema.Default
} {
	var out []struct {
		path string
		d    *ocschema.Default
	}
	obj := ocschema.LookupObject(object)
	for _, f := range obj.Fields {
		v := body.Get(f.Name)
		if !v.Exists() {
			continue
		}
		p := prefix + f.Name
		d := ocschema.DefaultFor(object, f.Name)
		if d != nil {
			out = append(out, struct {
				path string
				d    *ocschema.Default
			}{p, d})
			if topmost {
				continue
			}
		}
		switch f.Type {
		case ocschema.Object:
			out = append(out, defaultable(v, f.Ref, p+".", topmost)...)
		case ocschema.Union:
			u := ocschema.LookupUnion(f.Ref)
			if o := u.Object(v.Get(u.Key).Str); o != "" {
				out = append(out, defaultable(v, o, p+".", topmost)...)
			}
		}
	}
	return out
}

func rootObject(r ocschema.Record, body []byte) string {
	name := ocschema.MessageUnion
	if r == ocschema.PartRecord {
		name = ocschema.PartUnion
	}
	return ocschema.LookupUnion(name).Object(ocschema.VariantOf(r, body))
}

// TestBackfill shows each default of ocschema's backfill table on real
// OpenCode 1.18.33, on the recorded tool-loop session (plus a pending, a
// running and a failed tool and a retry, which the recording lacks): for
// every key that has a default, removing it makes GET
// /session/:id/message answer 400 (recorded in
// testdata/backfill-1.18.33.golden), and ocschema.Backfill's value makes
// it 200 again. Then every such key is removed at once and backfilled:
// GET answers 200, `opencode export` succeeds and resuming the session
// sends requests the mock accepts. The same for the one key OpenCode
// cannot serve at all (a user message's format): removing it is the
// repair.
func TestBackfill(t *testing.T) {
	t.Parallel()
	ctx := labCtx(t)
	l := newLab(t, opencodetest.Options{})
	for _, p := range loopExtraParts {
		l.exec(`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)`,
			p.id, loopToolMsg, realLoop, loopPartT, loopPartT, p.data)
	}
	srv := l.serve(ctx)
	get := func() (int, []byte) {
		code, body, err := srv.SessionMessages(ctx, realLoop)
		if err != nil {
			t.Fatal(err)
		}
		return code, body
	}
	if code, body := get(); code != 200 {
		t.Fatalf("the tool-loop session with the added parts does not load: %d %.300s", code, body)
	}

	type rec struct {
		table, id, label string
		r                ocschema.Record
		ids              ocschema.IDs
		ctx              ocschema.Context
		body             string
	}
	rows := l.rows(realLoop)
	info := l.sessionInfo(realLoop)
	mctx, pctx := ocschema.SessionContexts(info, rows)
	var recs []rec
	for i, m := range rows {
		recs = append(recs, rec{"message", m.ID, fmt.Sprintf("message %d (%s)", i, gjson.GetBytes(m.Body, "role").Str),
			ocschema.MessageRecord, ocschema.IDs{ID: m.ID, SessionID: realLoop}, mctx[i], string(m.Body)})
		for j, p := range m.Parts {
			label := fmt.Sprintf("part %d.%d (%s", i, j, gjson.GetBytes(p.Body, "type").Str)
			if s := gjson.GetBytes(p.Body, "state.status").Str; s != "" {
				label += " " + s
			}
			recs = append(recs, rec{"part", p.ID, label + ")", ocschema.PartRecord,
				ocschema.IDs{ID: p.ID, SessionID: realLoop, MessageID: m.ID}, pctx[i][j], string(p.Body)})
		}
	}

	var out strings.Builder
	fmt.Fprintf(&out, "# OpenCode %s, tool-loop session: each key with a default removed, then backfilled.\n", opencodetest.V1_18)
	fmt.Fprintf(&out, "# record | key | GET without it | backfilled value | GET after\n")
	proven := map[*ocschema.Default]bool{}
	for _, r := range recs {
		for _, k := range defaultable(gjson.Parse(r.body), rootObject(r.r, []byte(r.body)), "", false) {
			broken, err := sjson.Delete(r.body, k.path)
			if err != nil {
				t.Fatal(err)
			}
			l.setData(r.table, r.id, broken)
			code, body := get()
			before, _ := verdict(code, body)
			fixed, filled, left := ocschema.Backfill(r.r, []byte(broken), r.ids, r.ctx)
			l.setData(r.table, r.id, string(fixed))
			code, body = get()
			after, _ := verdict(code, body)
			l.setData(r.table, r.id, r.body)
			value := gjson.GetBytes(fixed, k.path).Raw
			fmt.Fprintf(&out, "%s | %s | %s | %s | %s\n", r.label, k.path, before, value, after)
			switch {
			case !strings.HasPrefix(before, "400 Missing key"):
				t.Errorf("%s without %s: OpenCode answers %s, want 400 Missing key", r.label, k.path, before)
			case len(filled) != 1 || filled[0].Path != k.path || len(left) != 0:
				t.Errorf("%s without %s: backfill filled %v, left %v", r.label, k.path, filled, left)
			case after != "200":
				t.Errorf("%s: %s backfilled with %s, OpenCode answers %s", r.label, k.path, value, after)
			default:
				proven[k.d] = true
			}
		}
	}
	for i := range ocschema.Defaults() {
		d := &ocschema.Defaults()[i]
		if !proven[d] {
			t.Errorf("default %s (%s.%s) was not shown on real OpenCode", d.Where, d.Object, d.Key)
		}
	}

	// The key OpenCode cannot serve: a user message's format.
	user := recs[0]
	withFormat, _ := sjson.Set(user.body, "format", map[string]any{"type": "json_schema", "schema": map[string]any{"type": "object"}})
	l.setData("message", user.id, withFormat)
	code, body := get()
	with, _ := verdict(code, body)
	problems := ocschema.Check(ocschema.MessageRecord, []byte(withFormat), user.ids)
	repaired, _ := sjson.Delete(withFormat, "format")
	l.setData("message", user.id, repaired)
	code, _ = get()
	fmt.Fprintf(&out, "%s | format | %s | (removed) | %d\n", user.label, with, code)
	if !strings.HasPrefix(with, "400") || code != 200 || len(problems) != 1 || problems[0].Kind != ocschema.Unencodable {
		t.Errorf("a stored format: OpenCode %s, without it %d; ocschema %v", with, code, problems)
	}

	// Every key with a default removed at once, then backfilled: the
	// session loads, exports and resumes.
	for i, r := range recs {
		broken := r.body
		for _, k := range defaultable(gjson.Parse(r.body), rootObject(r.r, []byte(r.body)), "", true) {
			broken, _ = sjson.Delete(broken, k.path)
		}
		recs[i].body = broken
		l.setData(r.table, r.id, broken)
	}
	code, body = get()
	all, _ := verdict(code, body)
	fmt.Fprintf(&out, "# all at once: GET %s\n", all)
	if code != 400 {
		t.Errorf("every default removed: OpenCode answers %s", all)
	}
	rows = l.rows(realLoop)
	mctx, pctx = ocschema.SessionContexts(info, rows)
	k := 0
	for i := range rows {
		for j := -1; j < len(rows[i].Parts); j++ {
			r, c := recs[k], mctx[i]
			if j >= 0 {
				c = pctx[i][j]
			}
			fixed, _, left := ocschema.Backfill(r.r, []byte(r.body), r.ids, c)
			if len(left) > 0 {
				t.Errorf("%s: left %v", r.label, left)
			}
			l.setData(r.table, r.id, string(fixed))
			k++
		}
	}
	code, body = get()
	all, _ = verdict(code, body)
	fmt.Fprintf(&out, "# all backfilled: GET %s\n", all)
	if code != 200 {
		t.Fatalf("everything backfilled: OpenCode answers %s", all)
	}

	// What a session missing them does outside the server: the plain
	// session, every key with a default removed, exported and resumed.
	plainRows := l.rows(realPlain)
	for _, m := range plainRows {
		strip := func(table string, r ocschema.Record, row ocschema.Row) {
			broken := string(row.Body)
			for _, k := range defaultable(gjson.ParseBytes(row.Body), rootObject(r, row.Body), "", true) {
				broken, _ = sjson.Delete(broken, k.path)
			}
			l.setData(table, row.ID, broken)
		}
		strip("message", ocschema.MessageRecord, m.Row)
		for _, p := range m.Parts {
			strip("part", ocschema.PartRecord, p)
		}
	}
	code, body, _ = srv.SessionMessages(ctx, realPlain)
	plainGet, _ := verdict(code, body)
	srv.Kill()
	plainExport := l.export(ctx, realPlain)
	plainRes, plainChat := l.resume(ctx, realPlain)
	fmt.Fprintf(&out, "# plain session without every key that has a default: GET %s; opencode export exit %d; opencode run --session exit %d, %d chat requests, accepted %v, error %s\n",
		plainGet, plainExport.ExitCode, plainRes.ExitCode, len(plainChat), accepted(plainRes, plainChat), runError(plainRes))

	res := l.export(ctx, realLoop)
	var doc struct{ Messages []json.RawMessage }
	if i := strings.Index(res.Stdout, "{"); res.ExitCode != 0 || i < 0 || json.Unmarshal([]byte(res.Stdout[i:]), &doc) != nil || len(doc.Messages) != len(rows) {
		t.Fatalf("export after the backfill:\n%s", res)
	}
	fmt.Fprintf(&out, "# all backfilled: opencode export exit 0, %d messages\n", len(doc.Messages))
	resumed, chat := l.resume(ctx, realLoop)
	if !accepted(resumed, chat) {
		for _, r := range chat {
			t.Logf("request %d: %s %s", r.Index, r.Verdict, r.Error)
		}
		t.Fatalf("resume after the backfill was not accepted:\n%s", resumed)
	}
	fmt.Fprintf(&out, "# all backfilled: opencode run --session exit 0, %d chat requests, all accepted\n", len(chat))
	golden(t, "backfill-"+opencodetest.V1_18+".golden", []byte(strings.ReplaceAll(out.String(), l.e.ProjectDir, "<project>")))
}
