//go:build acceptance

package opencodetest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/ocschemagen"
	"github.com/sessfix/sessfix/pkg/ocschema"
)

// zooID mints an id in OpenCode's format; n orders ids of one prefix.
func zooID(prefix string, n int) string {
	base := int64(0x1fed60000000) // after every recorded id
	if prefix == "ses" {
		base = 0xe01200000000 // ses ids descend: before every recorded one
	}
	return fmt.Sprintf("%s_%012x%s", prefix, base+int64(n)*4096, "Zoo0000000000"[:13]+strconv.Itoa(n%10))
}

// sample builds a value of object type name with every key, optional ones
// included, but for the keys OpenCode cannot serve (ocschema.Quirks);
// union keys take their first variant.
func sample(name string) map[string]any {
	obj := ocschema.LookupObject(name)
	out := map[string]any{}
	for _, f := range obj.Fields {
		if ocschema.QuirkFor(name, f.Name) == nil {
			out[f.Name] = sampleValue(f.Type, f.Ref, f.Elem, f.Enum, f.Prefix)
		}
	}
	return out
}

func sampleValue(t ocschema.Type, ref string, elem ocschema.Type, enum []string, prefix string) any {
	switch t {
	case ocschema.String:
		switch {
		case len(enum) > 0:
			return enum[0]
		case prefix != "":
			return zooID(prefix, 99)
		}
		return "sample"
	case ocschema.Number, ocschema.Integer:
		return 1
	case ocschema.Boolean:
		return false
	case ocschema.Object:
		return sample(ref)
	case ocschema.Union:
		return sample(ocschema.LookupUnion(ref).Variants[0].Object)
	case ocschema.Map:
		return map[string]any{"k": sampleValue(elem, ref, ocschema.Any, nil, "")}
	case ocschema.Array:
		return []any{sampleValue(elem, ref, ocschema.Any, nil, "")}
	}
	return map[string]any{"any": "value"}
}

// zooRecord is one record of the zoo session, as stored in SQLite.
type zooRecord struct {
	label string // "message 1 (assistant)", "part 1.4 (tool)"
	table string
	id    string
	rec   ocschema.Record
	ids   ocschema.IDs
	msg   int // index of the message in GET's answer
	part  int // index of the part in its message, -1 for a message
	data  string
}

// opencodePath is the prefix OpenCode's decoder puts before a key of the
// record in GET /session/:id/message's answer.
func (z *zooRecord) opencodePath() string {
	if z.part < 0 {
		return fmt.Sprintf(`[%d]["info"]`, z.msg)
	}
	return fmt.Sprintf(`[%d]["parts"][%d]`, z.msg, z.part)
}

// buildZoo adds a session to the lab's store holding one record of every
// message role and part type, tool state and nested union variant the
// schema has, each with every key (sample values), and returns its id and
// records.
func buildZoo(l *lab) (string, []*zooRecord) {
	l.t.Helper()
	ses := zooID("ses", 1)
	tx, err := l.db.Begin()
	if err != nil {
		l.t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TEMP TABLE zoo AS SELECT * FROM session WHERE id = '` + realPlain + `'`,
		`UPDATE zoo SET id = '` + ses + `', slug = 'zoo', title = 'Every record type'`,
		`INSERT INTO session SELECT * FROM zoo`,
		`DROP TABLE zoo`,
	} {
		if _, err := tx.Exec(q); err != nil {
			l.t.Fatalf("%s: %v", q, err)
		}
	}
	var recs []*zooRecord
	created := int64(1795276800000)
	addMsg := func(role, object string) string {
		n := len(recs) + 1
		id := zooID("msg", n)
		body := sample(object)
		delete(body, "id")
		delete(body, "sessionID")
		if role == "assistant" {
			body["parentID"] = recs[0].id
		}
		b, _ := json.Marshal(body)
		created += 1000
		if _, err := tx.Exec(`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)`,
			id, ses, created, created, string(b)); err != nil {
			l.t.Fatal(err)
		}
		msg := 0
		for _, r := range recs {
			if r.part < 0 {
				msg++
			}
		}
		recs = append(recs, &zooRecord{label: fmt.Sprintf("message %d (%s)", msg, role), table: "message", id: id,
			rec: ocschema.MessageRecord, ids: ocschema.IDs{ID: id, SessionID: ses}, msg: msg, part: -1, data: string(b)})
		return id
	}
	addPart := func(msgID string, object string, edit func(map[string]any)) {
		n := len(recs) + 1
		id := zooID("prt", n)
		body := sample(object)
		delete(body, "id")
		delete(body, "sessionID")
		delete(body, "messageID")
		if edit != nil {
			edit(body)
		}
		b, _ := json.Marshal(body)
		created += 10
		if _, err := tx.Exec(`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)`,
			id, msgID, ses, created, created, string(b)); err != nil {
			l.t.Fatal(err)
		}
		var msg, part int
		for _, r := range recs {
			if r.id == msgID {
				msg = r.msg
			}
			if r.table == "part" && r.ids.MessageID == msgID {
				part++
			}
		}
		recs = append(recs, &zooRecord{label: fmt.Sprintf("part %d.%d (%s)", msg, part, body["type"]), table: "part", id: id,
			rec: ocschema.PartRecord, ids: ocschema.IDs{ID: id, SessionID: ses, MessageID: msgID}, msg: msg, part: part, data: string(b)})
	}
	user := addMsg("user", "UserMessage")
	for _, p := range []string{"TextPart", "FilePart", "AgentPart", "SubtaskPart", "CompactionPart"} {
		addPart(user, p, nil)
	}
	asst := addMsg("assistant", "AssistantMessage")
	tool := func(state string) func(map[string]any) {
		return func(b map[string]any) { b["state"] = sample(state) }
	}
	addPart(asst, "StepStartPart", nil)
	addPart(asst, "ReasoningPart", nil)
	for _, s := range []string{"ToolStatePending", "ToolStateRunning", "ToolStateCompleted", "ToolStateError"} {
		addPart(asst, "ToolPart", tool(s))
	}
	for _, p := range []string{"TextPart", "SnapshotPart", "PatchPart", "RetryPart", "StepFinishPart"} {
		addPart(asst, p, nil)
	}
	if err := tx.Commit(); err != nil {
		l.t.Fatal(err)
	}
	return ses, recs
}

// mutation is one change to one key of a zoo record.
type mutation struct {
	path  string // sjson path in the record
	what  string // "delete", "null", "=123", "variant resource"
	value any    // the new value (ignored for delete)
	del   bool
}

// mutations lists the changes that probe every key of a record: remove
// it, make it null, give it another JSON type, and break its integer,
// minimum, prefix or enum; a union key also gets each of its other
// variants (which must load).
func mutations(body gjson.Result, object, prefix string) []mutation {
	var out []mutation
	obj := ocschema.LookupObject(object)
	for _, f := range obj.Fields {
		v := body.Get(f.Name)
		p := prefix + f.Name
		if q := ocschema.QuirkFor(object, f.Name); q != nil && f.Type == ocschema.Union {
			for _, variant := range ocschema.LookupUnion(f.Ref).Variants {
				out = append(out, mutation{path: p, what: "variant " + variant.Value, value: sample(variant.Object)})
			}
			continue
		}
		if !v.Exists() {
			continue // ids: SQLite keeps them in columns
		}
		out = append(out, mutation{path: p, what: "delete", del: true})
		if f.Type == ocschema.Any {
			continue
		}
		out = append(out, mutation{path: p, what: "null", value: nil})
		if f.Type == ocschema.String {
			out = append(out, mutation{path: p, what: "=123", value: 123})
		} else {
			out = append(out, mutation{path: p, what: `="x"`, value: "x"})
		}
		if f.Type == ocschema.Integer {
			out = append(out, mutation{path: p, what: "=1.5", value: 1.5})
		}
		if f.HasMin {
			out = append(out, mutation{path: p, what: "=-1", value: -1})
		}
		if f.Prefix != "" {
			out = append(out, mutation{path: p, what: `="bad"`, value: "bad"})
		}
		if len(f.Enum) > 0 {
			out = append(out, mutation{path: p, what: `="zz"`, value: "zz"})
		}
		switch f.Type {
		case ocschema.Object:
			out = append(out, mutations(v, f.Ref, p+".")...)
		case ocschema.Union:
			u := ocschema.LookupUnion(f.Ref)
			out = append(out, mutations(v, u.Object(v.Get(u.Key).Str), p+".")...)
			for _, variant := range u.Variants[1:] {
				out = append(out, mutation{path: p, what: "variant " + variant.Value, value: sample(variant.Object)})
			}
		case ocschema.Array:
			if f.Elem == ocschema.Object {
				out = append(out, mutations(v.Get("0"), f.Ref, p+".0.")...)
			}
		}
	}
	return out
}

// opencodeError is the message and location in OpenCode's 400 answer.
var atRe = regexp.MustCompile(`(?s)^(.*)\n  at (.*)$`)

// verdict turns OpenCode's answer into "200" or "400 <message> at <path>",
// its first line shortened.
func verdict(code int, body []byte) (string, string) {
	if code == 200 {
		return "200", ""
	}
	var e struct {
		Data struct{ Message string }
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return fmt.Sprintf("%d %.200s", code, body), ""
	}
	m := atRe.FindStringSubmatch(e.Data.Message)
	if m == nil {
		return fmt.Sprintf("%d %s", code, e.Data.Message), ""
	}
	msg := m[1]
	if len(msg) > 70 {
		msg = msg[:70] + "…"
	}
	return fmt.Sprintf("%d %s at %s", code, msg, m[2]), m[2]
}

// toOpenCodePath writes an sjson path the way OpenCode's decoder reports
// it, after the record's own prefix.
func toOpenCodePath(prefix, path string) string {
	var b strings.Builder
	b.WriteString(prefix)
	if path == "" {
		return b.String()
	}
	for _, k := range strings.Split(path, ".") {
		if _, err := strconv.Atoi(k); err == nil {
			fmt.Fprintf(&b, "[%s]", k)
		} else {
			fmt.Fprintf(&b, "[%q]", k)
		}
	}
	return b.String()
}

// expectedAt is where OpenCode must report ocschema's first problem: a
// union's unknown key is reported at the union.
func expectedAt(z *zooRecord, p ocschema.Problem) string {
	path := p.Path
	if p.Kind == ocschema.UnknownVariant {
		if i := strings.LastIndex(path, "."); i >= 0 {
			path = path[:i]
		} else {
			path = ""
		}
	}
	return toOpenCodePath(z.opencodePath(), path)
}

// TestSchemaVerdicts holds ocschema's table against real OpenCode 1.18.33.
// The OpenAPI document `opencode serve` publishes must be the committed
// capture the table was generated from. Then a session with every record
// type, each with every key, must load (GET /session/:id/message 200), and
// for each key of each record, removing it, nulling it, giving it another
// type or breaking its integer, minimum, prefix or enum must get the
// verdict ocschema.Check predicts: 200 when Check finds nothing, else 400
// naming the key Check reports first. OpenCode's answers are recorded in
// testdata/schema-1.18.33.golden.
func TestSchemaVerdicts(t *testing.T) {
	t.Parallel()
	ctx := labCtx(t)
	l := newLab(t, opencodetest.Options{})
	ses, zoo := buildZoo(l)
	srv := l.serve(ctx)

	code, doc, err := srv.Get(ctx, "/doc")
	if err != nil || code != 200 {
		t.Fatalf("GET /doc: %d %v", code, err)
	}
	oa, err := ocschemagen.SubsetOpenAPI(doc, opencodetest.V1_18)
	if err != nil {
		t.Fatal(err)
	}
	served, _ := oa.Marshal()
	root, _ := opencodetest.RepoRoot()
	committed, err := os.ReadFile(filepath.Join(root, "pkg", "ocschema", "testdata", ocschemagen.OpenAPIFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(served, committed) {
		t.Errorf("OpenCode %s serves another record schema than pkg/ocschema/testdata/%s; re-capture with go run ./internal/opencodetest/ocschemagen/cmd/ocschemagen -capture -dir pkg/ocschema",
			opencodetest.V1_18, ocschemagen.OpenAPIFile)
	}

	get := func() (int, []byte) {
		code, body, err := srv.SessionMessages(ctx, ses)
		if err != nil {
			t.Fatal(err)
		}
		return code, body
	}
	if code, body := get(); code != 200 {
		t.Fatalf("the zoo session with every record type does not load: %d %s", code, body)
	}
	var out strings.Builder
	fmt.Fprintf(&out, "# GET /session/:id/message of OpenCode %s, one change to one key of one record at a time.\n", opencodetest.V1_18)
	fmt.Fprintf(&out, "# record | key | change | OpenCode's answer (400: the first line of data.message and where)\n")
	n, kinds := 0, map[string]int{}
	for _, z := range zoo {
		variant := ocschema.VariantOf(z.rec, []byte(z.data))
		root := ocschema.LookupUnion(ocschema.MessageUnion)
		if z.rec == ocschema.PartRecord {
			root = ocschema.LookupUnion(ocschema.PartUnion)
		}
		for _, m := range mutations(gjson.Parse(z.data), root.Object(variant), "") {
			var changed string
			if m.del {
				changed, err = sjson.Delete(z.data, m.path)
			} else {
				changed, err = sjson.Set(z.data, m.path, m.value)
			}
			if err != nil {
				t.Fatal(err)
			}
			l.setData(z.table, z.id, changed)
			code, body := get()
			l.setData(z.table, z.id, z.data)
			got, at := verdict(code, body)
			fmt.Fprintf(&out, "%s | %s | %s | %s\n", z.label, m.path, m.what, got)
			n++
			problems := ocschema.Check(z.rec, []byte(changed), z.ids)
			switch {
			case len(problems) == 0 && code != 200:
				t.Errorf("%s %s %s: ocschema finds nothing, OpenCode answers %s", z.label, m.path, m.what, got)
			case len(problems) > 0 && code == 200:
				t.Errorf("%s %s %s: ocschema reports %v, OpenCode loads it", z.label, m.path, m.what, problems)
			case len(problems) > 0 && expectedAt(z, problems[0]) != at:
				t.Errorf("%s %s %s: ocschema reports %v first, OpenCode %s", z.label, m.path, m.what, problems, got)
			case len(problems) > 0 && problems[0].Kind == ocschema.Missing && !strings.Contains(got, "Missing key"):
				t.Errorf("%s %s %s: ocschema says missing, OpenCode %s", z.label, m.path, m.what, got)
			}
			if len(problems) > 0 {
				kinds[fmt.Sprint(problems[0].Kind)]++
			}
		}
	}
	if code, body := get(); code != 200 {
		t.Fatalf("the zoo session no longer loads after the changes were undone: %d %.300s", code, body)
	}
	if n < 300 || len(kinds) < 6 {
		t.Errorf("only %d changes, problem kinds %v", n, kinds)
	}
	t.Logf("%d changes probed", n)
	golden(t, "schema-"+opencodetest.V1_18+".golden", []byte(out.String()))
}
