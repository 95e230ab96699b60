package ocschema_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/ocschemagen"
	"github.com/sessfix/sessfix/pkg/ocschema"
)

// TestGeneratedTable regenerates schema_gen.go from @opencode-ai/sdk (npm)
// and the committed OpenAPI capture: the committed table must be exactly
// what they give. (internal/opencodetest checks the capture against what
// real OpenCode serves.)
func TestGeneratedTable(t *testing.T) {
	capture, err := os.ReadFile(filepath.Join("testdata", ocschemagen.OpenAPIFile))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ocschemagen.Generate(capture)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("schema_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("schema_gen.go differs from what @opencode-ai/sdk and the OpenAPI capture give; run go generate ./pkg/ocschema/")
	}
	if ocschema.SDKIntegrity != ocschemagen.SDKIntegrity {
		t.Fatalf("SDKIntegrity %s, want %s", ocschema.SDKIntegrity, ocschemagen.SDKIntegrity)
	}
}

// TestRealRecordsPass checks every record real OpenCode wrote in
// testdata/real (1.18.33 with each provider family, and 1.1.65): real
// records have no problems.
func TestRealRecordsPass(t *testing.T) {
	root, err := opencodetest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	dirs, err := filepath.Glob(filepath.Join(root, "testdata", "real", "opencode-*"))
	if err != nil || len(dirs) < 2 {
		t.Fatalf("recordings %v %v", dirs, err)
	}
	for _, dir := range dirs {
		v := filepath.Base(dir)
		ids, err := opencodetest.Sessions(dir)
		if err != nil || len(ids) == 0 {
			t.Fatalf("%s: %v %v", dir, ids, err)
		}
		for _, id := range ids {
			msgs, err := opencodetest.LoadSession(dir, id)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				body, _ := json.Marshal(m.Data)
				if p := ocschema.Check(ocschema.MessageRecord, body, ocschema.IDs{ID: m.ID, SessionID: id}); p != nil {
					t.Errorf("%s message %s: %v", v, m.ID, p)
				}
				n++
				for _, part := range m.Parts {
					body, _ := json.Marshal(part.Data)
					if p := ocschema.Check(ocschema.PartRecord, body, ocschema.IDs{ID: part.ID, SessionID: id, MessageID: m.ID}); p != nil {
						t.Errorf("%s part %s: %v", v, part.ID, p)
					}
					n++
				}
			}
		}
	}
	if n < 80 {
		t.Fatalf("checked only %d records", n)
	}
}

const (
	userMsg  = `{"role":"user","time":{"created":1795276748321},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"},"summary":{"diffs":[]}}`
	asstMsg  = `{"parentID":"msg_1fed5361d001QlOpfHagQSBZKN","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/p","root":"/"},"cost":0.02,"tokens":{"total":7666,"input":7646,"output":20,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"claude-sonnet-4-5","providerID":"anthropic","time":{"created":1795276751214,"completed":1795276754155},"finish":"tool-calls"}`
	toolDone = `{"type":"tool","callID":"toolu_1","tool":"bash","state":{"status":"completed","input":{"command":"ls"},"output":"a\n","title":"ls","metadata":{"exit":0},"time":{"start":1795276752000,"end":1795276753000}}}`
	stepEnd  = `{"reason":"tool-calls","type":"step-finish","tokens":{"input":1,"output":2,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.1}`
)

var (
	msgIDs  = ocschema.IDs{ID: "msg_1fed5416d001xO9zyvrPKgrNA5", SessionID: "ses_e012acd97ffeUavLGQWWTi4jHW"}
	partIDs = ocschema.IDs{ID: "prt_1fed54ca3001fvAhxqVt50kdQG", SessionID: "ses_e012acd97ffeUavLGQWWTi4jHW", MessageID: "msg_1fed5416d001xO9zyvrPKgrNA5"}
)

func set(t *testing.T, body, path string, v any) []byte {
	t.Helper()
	out, err := sjson.Set(body, path, v)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(out)
}

func del(t *testing.T, body, path string) []byte {
	t.Helper()
	out, err := sjson.Delete(body, path)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(out)
}

// TestCheck shows each kind of problem, with the words OpenCode 1.18.33
// answers GET /session/:id/message with for the same record (recorded in
// internal/opencodetest/testdata/schema-1.18.33.golden).
func TestCheck(t *testing.T) {
	cases := []struct {
		name string
		rec  ocschema.Record
		body []byte
		ids  ocschema.IDs
		want []string
	}{
		{"healthy user", ocschema.MessageRecord, []byte(userMsg), msgIDs, nil},
		{"healthy assistant", ocschema.MessageRecord, []byte(asstMsg), msgIDs, nil},
		{"healthy tool", ocschema.PartRecord, []byte(toolDone), partIDs, nil},
		{"ids come from the columns", ocschema.MessageRecord, []byte(userMsg), ocschema.IDs{}, []string{"id: missing key", "sessionID: missing key"}},
		{"missing agent", ocschema.MessageRecord, del(t, userMsg, "agent"), msgIDs, []string{"agent: missing key"}},
		{"agent null", ocschema.MessageRecord, set(t, userMsg, "agent", nil), msgIDs, []string{"agent: expected string, got null"}},
		{"agent a number", ocschema.MessageRecord, set(t, userMsg, "agent", 5), msgIDs, []string{"agent: expected string, got 5"}},
		{"user time may be fractional", ocschema.MessageRecord, set(t, userMsg, "time.created", 1.5), msgIDs, nil},
		{"assistant time must be whole", ocschema.MessageRecord, set(t, asstMsg, "time.created", 1.5), msgIDs, []string{"time.created: expected an integer, got 1.5"}},
		{"negative time", ocschema.MessageRecord, set(t, asstMsg, "time.created", -1), msgIDs, []string{"time.created: expected a value greater than or equal to 0, got -1"}},
		{"parentID without prefix", ocschema.MessageRecord, set(t, asstMsg, "parentID", "xyz"), msgIDs, []string{`parentID: expected a string starting with "msg", got "xyz"`}},
		{"several at once", ocschema.MessageRecord, del(t, string(del(t, asstMsg, "mode")), "agent"), msgIDs, []string{"mode: missing key", "agent: missing key"}},
		{"unknown role", ocschema.MessageRecord, set(t, asstMsg, "role", "system"), msgIDs, []string{`role: expected one of "user", "assistant", got "system"`}},
		{"no role", ocschema.MessageRecord, del(t, asstMsg, "role"), msgIDs, []string{`role: missing key (expected one of "user", "assistant")`}},
		{"foreign part type", ocschema.PartRecord, set(t, toolDone, "type", "thinking"), partIDs, []string{`type: expected one of "text", "subtask", "reasoning", "file", "tool", "step-start", "step-finish", "snapshot", "patch", "agent", "retry", "compaction", got "thinking"`}},
		{"unknown keys are allowed", ocschema.PartRecord, set(t, toolDone, "thinking", "x"), partIDs, nil},
		{"tool state title", ocschema.PartRecord, del(t, toolDone, "state.title"), partIDs, []string{"state.title: missing key"}},
		{"tool state unknown status", ocschema.PartRecord, set(t, toolDone, "state.status", "done"), partIDs, []string{`state.status: expected one of "pending", "running", "completed", "error", got "done"`}},
		{"tokens of the wrong type", ocschema.PartRecord, set(t, stepEnd, "tokens.input", "5"), partIDs, []string{`tokens.input: expected number, got "5"`}},
		{"map values", ocschema.MessageRecord, set(t, userMsg, "tools.bash", "yes"), msgIDs, []string{`tools.bash: expected boolean, got "yes"`}},
		{"array items", ocschema.MessageRecord, set(t, userMsg, "summary.diffs", []any{map[string]any{"additions": 1}}), msgIDs, []string{"summary.diffs.0.deletions: missing key"}},
		{"a stored format", ocschema.MessageRecord, set(t, userMsg, "format", map[string]any{"type": "text"}), msgIDs,
			[]string{`format: OpenCode 1.18.33 cannot serve this key (400 "Expected OutputFormatText, got {\"type\":\"text\"}" (OutputFormatJsonSchema alike))`}},
		{"not an object", ocschema.PartRecord, []byte(`[1]`), partIDs, []string{"(record): not a JSON object"}},
		{"not JSON", ocschema.PartRecord, []byte("\x00\x00"), partIDs, []string{"(record): not a JSON object"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, p := range ocschema.Check(c.rec, c.body, c.ids) {
				got = append(got, p.String())
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestProblemObject(t *testing.T) {
	p := ocschema.Check(ocschema.PartRecord, del(t, toolDone, "state.time.end"), partIDs)
	if len(p) != 1 || p[0].Object != "ToolStateCompleted.time" || p[0].Kind != ocschema.Missing || p[0].Path != "state.time.end" {
		t.Fatalf("%+v", p)
	}
}

// TestBackfill fills what a default exists for, from the context, and
// leaves the rest.
func TestBackfill(t *testing.T) {
	ctx := ocschema.Context{
		Created: 1000, Completed: 5000, PreviousUser: "msg_1fed5361d001QlOpfHagQSBZKN",
		Parent: []byte(userMsg), Reply: []byte(asstMsg), Message: []byte(asstMsg),
		Session: ocschema.SessionInfo{Directory: "/home/u/p", Worktree: "/"},
	}
	cases := []struct {
		name   string
		rec    ocschema.Record
		body   []byte
		want   map[string]string // path -> JSON after backfill
		filled int
		left   []string
	}{
		{"user agent and model from the reply", ocschema.MessageRecord, del(t, string(del(t, userMsg, "agent")), "model"),
			map[string]string{"agent": `"build"`, "model": `{"modelID":"claude-sonnet-4-5","providerID":"anthropic"}`}, 2, nil},
		{"user time", ocschema.MessageRecord, del(t, userMsg, "time"), map[string]string{"time": `{"created":1000}`}, 1, nil},
		{"assistant bookkeeping", ocschema.MessageRecord,
			del(t, string(del(t, string(del(t, string(del(t, asstMsg, "parentID")), "path")), "tokens")), "modelID"),
			map[string]string{"parentID": `"msg_1fed5361d001QlOpfHagQSBZKN"`, "path": `{"cwd":"/home/u/p","root":"/"}`,
				"tokens": `{"cache":{"read":0,"write":0},"input":0,"output":0,"reasoning":0}`, "modelID": `"claude-sonnet-4-5"`}, 4, nil},
		{"null agent", ocschema.MessageRecord, set(t, asstMsg, "agent", nil), map[string]string{"agent": `"build"`}, 1, nil},
		{"step-finish reason from the message", ocschema.PartRecord, del(t, stepEnd, "reason"), map[string]string{"reason": `"tool-calls"`}, 1, nil},
		{"tool state", ocschema.PartRecord, del(t, string(del(t, toolDone, "state.title")), "state.time"),
			map[string]string{"state.title": `""`, "state.time": `{"end":5000,"start":1000}`}, 2, nil},
		{"user model from the session when the reply has none", ocschema.MessageRecord, del(t, userMsg, "model"),
			map[string]string{"model": `{"modelID":"claude-sonnet-4-5","providerID":"anthropic"}`}, 1, nil},
		{"no default for content", ocschema.PartRecord, del(t, toolDone, "state.output"), nil, 0, []string{"state.output: missing key"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, filled, left := ocschema.Backfill(c.rec, c.body, partOrMsgIDs(c.rec), ctx)
			if len(filled) != c.filled {
				t.Errorf("filled %v", filled)
			}
			var l []string
			for _, p := range left {
				l = append(l, p.String())
			}
			if !slices.Equal(l, c.left) {
				t.Errorf("left %q, want %q", l, c.left)
			}
			for path, want := range c.want {
				var g any
				if err := json.Unmarshal([]byte(gjson.GetBytes(out, path).Raw), &g); err != nil {
					t.Fatalf("%s: %v in %s", path, err, out)
				}
				gb, _ := json.Marshal(g)
				if string(gb) != want {
					t.Errorf("%s = %s, want %s", path, gb, want)
				}
			}
			if gjson.GetBytes(out, "id").Exists() || gjson.GetBytes(out, "sessionID").Exists() {
				t.Errorf("ids written into the body: %s", out)
			}
			if c.filled == 0 && !bytes.Equal(out, c.body) {
				t.Errorf("body changed with nothing filled")
			}
		})
	}
}

func TestBackfillSessionModel(t *testing.T) {
	c := ocschema.Context{Created: 1, Session: ocschema.SessionInfo{ProviderID: "openai", ModelID: "gpt-5"}}
	out, filled, left := ocschema.Backfill(ocschema.MessageRecord, del(t, userMsg, "model"), msgIDs, c)
	if len(filled) != 1 || len(left) != 0 || gjson.GetBytes(out, "model.providerID").Str != "openai" {
		t.Fatalf("%s %v %v", out, filled, left)
	}
	out, filled, _ = ocschema.Backfill(ocschema.MessageRecord, del(t, userMsg, "model"), msgIDs, ocschema.Context{Created: 1})
	if len(filled) != 0 || gjson.GetBytes(out, "model").Exists() {
		t.Fatalf("a model from nowhere: %s", out)
	}
}

// TestSessionContexts derives contexts for the recorded tool loop.
func TestSessionContexts(t *testing.T) {
	msgs := []ocschema.MessageRow{
		{Row: ocschema.Row{ID: "msg_u1", Created: 10, Body: []byte(`{"role":"user"}`)}},
		{Row: ocschema.Row{ID: "msg_a1", Created: 20, Body: []byte(`{"role":"assistant","parentID":"msg_u1","modelID":"m1","providerID":"p","time":{"completed":25}}`)},
			Parts: []ocschema.Row{{ID: "prt_1", Created: 21, Body: []byte(`{"type":"step-start"}`)}}},
		{Row: ocschema.Row{ID: "msg_a2", Created: 30, Body: []byte(`{"role":"assistant","modelID":"m2"}`)}},
		{Row: ocschema.Row{ID: "msg_u2", Created: 40, Body: []byte(`{"role":"user","model":{"modelID":"m3"}}`)}},
		{Row: ocschema.Row{ID: "msg_a3", Created: 50, Body: []byte(`{"role":"assistant","parentID":"msg_gone"}`)}},
	}
	m, p := ocschema.SessionContexts(ocschema.SessionInfo{Directory: "/d"}, msgs)
	if string(m[0].Reply) != string(msgs[1].Body) || m[1].PreviousUser != "msg_u1" || string(m[1].Parent) != string(msgs[0].Body) ||
		m[2].PreviousUser != "msg_u1" || m[3].Reply != nil && string(m[3].Reply) != string(msgs[4].Body) ||
		m[4].PreviousUser != "msg_u2" || string(m[4].Parent) != string(msgs[3].Body) {
		t.Fatalf("%+v", m)
	}
	if p[1][0].Created != 21 || p[1][0].Completed != 25 || string(p[1][0].Message) != string(msgs[1].Body) || p[1][0].Session.Directory != "/d" {
		t.Fatalf("%+v", p[1][0])
	}
}

func partOrMsgIDs(r ocschema.Record) ocschema.IDs {
	if r == ocschema.PartRecord {
		return partIDs
	}
	return msgIDs
}

// TestDefaultsTable checks every default names a key of the schema, and
// that the keys without one are the ones that carry content or identity.
func TestDefaultsTable(t *testing.T) {
	for _, d := range ocschema.Defaults() {
		obj := ocschema.LookupObject(d.Object)
		if obj == nil || obj.Field(d.Key) == nil {
			t.Errorf("default %s.%s: no such key", d.Object, d.Key)
			continue
		}
		if d.Where == "" || d.Value == "" || d.Why == "" {
			t.Errorf("default %s.%s is not documented", d.Object, d.Key)
		}
	}
	var none []string
	for _, f := range ocschema.NoDefault() {
		none = append(none, f.Parent+"."+f.Name)
	}
	for _, want := range []string{"UserMessage.role", "AssistantMessage.role", "TextPart.text", "ReasoningPart.text",
		"ToolPart.callID", "ToolPart.tool", "ToolPart.state", "ToolStateCompleted.output", "ToolStateError.error", "FilePart.url"} {
		if !slices.Contains(none, want) {
			t.Errorf("%s should have no default; NoDefault: %v", want, none)
		}
	}
	for _, f := range none {
		if strings.HasSuffix(f, ".agent") && strings.HasPrefix(f, "UserMessage") {
			t.Errorf("%s has a default", f)
		}
	}
}
