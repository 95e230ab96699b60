package scan

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

const (
	sig      = `"metadata":{"anthropic":{"signature":"c2ln"}}`
	userBody = `{"role":"user","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}`
	asstBody = `{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":2,"completed":3},"finish":"stop"}`
	// killed is an assistant turn OpenCode was killed in: no completion,
	// no finish, no error.
	killed   = `{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":2}}`
	toolDone = `{"type":"tool","callID":"call_1","tool":"bash","state":{"status":"completed","input":{},"output":"ok","time":{"start":1,"end":2}}}`
)

func session(shape store.Shape, msgs ...*store.Message) *store.Session {
	return &store.Session{Store: store.Info{Shape: shape, Path: "/x"}, ID: "ses_1", Messages: msgs}
}

func user(id, text string) *store.Message {
	return testMessage(id, "user", userBody, `{"type":"text","text":`+fmt.Sprintf("%q", text)+`}`)
}

// settled checks a session as if it had been idle for an hour.
func settled() *Options {
	now := time.Now().Add(time.Hour)
	return &Options{Now: func() time.Time { return now }}
}

func violationCodes(vs []Violation) string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Code+"@"+v.Index)
	}
	return strings.Join(out, " ")
}

func TestBuildRequestSplitsStepsAndMapsBlocks(t *testing.T) {
	s := session(store.ShapeSQLite,
		user("u1", "list files"),
		testMessage("a1", "assistant", asstBody,
			`{"type":"step-start"}`, `{"type":"reasoning","text":"use ls",`+sig+`}`, toolDone, `{"type":"step-finish"}`,
			`{"type":"step-start"}`, `{"type":"reasoning","text":"summarise",`+sig+`}`, `{"type":"text","text":"a and b"}`),
		user("u2", "next"),
	)
	r := sent.Build(s, sent.Options{NextPrompt: true})
	want := "0 user [text]\n1 assistant [thinking tool_use]\n2 user [tool_result]\n3 assistant [thinking text]\n4 user [text text]\n"
	if got := renderRequest(r); got != want {
		t.Fatalf("request\n%swant\n%s", got, want)
	}
	cases := []struct {
		n, m       int
		msg, part  string
		ok         bool
		whyContain string
	}{
		{1, 0, "a1", "a1-b", true, ""},
		{1, 1, "a1", "a1-c", true, ""},
		{2, 0, "a1", "a1-c", true, ""}, // the tool result is the tool part
		{3, 1, "a1", "a1-g", true, ""},
		{3, -1, "a1", "", true, ""},
		{4, 0, "u2", "u2-a", true, ""},
		{4, 1, "", "", false, "next prompt"}, // the next prompt maps to nothing
		{5, -1, "", "", false, "outside"},
		{1, 2, "", "", false, "content blocks"},
	}
	for _, c := range cases {
		msg, part, ok := r.Locate(c.n, c.m)
		if msg != c.msg || part != c.part || ok != c.ok {
			t.Errorf("Locate(%d,%d) = %q %q %v, want %q %q %v", c.n, c.m, msg, part, ok, c.msg, c.part, c.ok)
		}
		if !c.ok {
			if _, _, err := r.LocateIndex(idx(c.n, c.m)); err == nil || !strings.Contains(err.Error(), c.whyContain) {
				t.Errorf("LocateIndex(%s): %v, want an error about %q", idx(c.n, c.m), err, c.whyContain)
			}
		}
	}
	if vs := CheckRequest(s, r, nil); len(vs) != 0 {
		t.Errorf("healthy request: %s", violationCodes(vs))
	}
}

func TestBuildRequestSkipsAndMerges(t *testing.T) {
	s := session(store.ShapeSQLite,
		user("u1", "hi"),
		testMessage("a1", "assistant", asstBody, `{"type":"step-start"}`, `{"type":"text","text":"hello"}`),
		testMessage("u2", "user", userBody, `{"type":"text","text":""}`, `{"type":"text","text":"x","ignored":true}`),
		testMessage("e1", "assistant", `{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","error":{"name":"APIError","data":{"message":"boom"}}}`,
			`{"type":"step-start"}`, `{"type":"text","text":"partial"}`),
		testMessage("ab", "assistant", `{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","error":{"name":"MessageAbortedError"}}`,
			`{"type":"step-start"}`, `{"type":"reasoning","text":"only thinking",`+sig+`}`),
		testMessage("none", "assistant", asstBody),
		user("u3", "again"),
		user("u4", "and again"),
	)
	r := sent.Build(s, sent.Options{})
	if got, want := renderRequest(r), "0 user [text]\n1 assistant [text]\n2 user [text text]\n"; got != want {
		t.Fatalf("request\n%swant\n%s", got, want)
	}
	if got := strings.Join(r.Messages[2].Sources, ","); got != "u3,u4" {
		t.Errorf("sources of messages.2 = %s", got)
	}
	if _, _, err := r.LocateIndex("messages.2"); err == nil || !strings.Contains(err.Error(), "combines stored messages u3, u4") {
		t.Errorf("merged entry mapped: %v", err)
	}
	if id, part, err := r.LocateIndex("messages.2.content.1: whatever"); err != nil || id != "u4" || part != "u4-a" {
		t.Errorf("block of a merged entry: %q %q %v", id, part, err)
	}
	// As of an error, the request ended before the errored message.
	r = sent.Build(s, sent.Options{Until: "e1"})
	if got := len(r.Messages); got != 2 {
		t.Errorf("until e1: %d messages", got)
	}
}

func TestBuildRequestVersions(t *testing.T) {
	// A kill mid-text: signed reasoning, then the text part OpenCode had
	// not filled yet.
	midText := func(shape store.Shape) *store.Session {
		return session(shape, user("u1", "hi"),
			testMessage("a1", "assistant", killed, `{"type":"step-start"}`, `{"type":"reasoning","text":"think",`+sig+`}`, `{"type":"text","text":""}`))
	}
	cases := []struct {
		name  string
		s     *store.Session
		v     sent.Version
		req   string
		codes string
	}{
		// 1.18 sends "" as " " next to signed reasoning.
		{"1.18 mid-text", midText(store.ShapeSQLite), sent.V118, "0 user [text]\n1 assistant [thinking text]\n2 user [text]\n", "SF151@messages.1.content.1"},
		// 1.1 drops the empty text: a thinking-only message.
		{"1.1 mid-text", midText(store.ShapeStorage), sent.V11, "0 user [text]\n1 assistant [thinking]\n2 user [text]\n", "SF155@messages.1"},
		// 1.1 killed mid-thinking: unsigned partial reasoning is kept by
		// OpenCode and dropped by the SDK, an empty assistant message.
		{"1.1 unsigned partial", session(store.ShapeStorage, user("u1", "hi"),
			testMessage("a1", "assistant", killed, `{"type":"step-start"}`, `{"type":"reasoning","text":"thin"}`)),
			sent.V11, "0 user [text]\n1 assistant []\n2 user [text]\n", "SF150@messages.1"},
		// 1.18 keeps non-blank unsigned reasoning too (only blank unsigned
		// reasoning is dropped by OpenCode): the same empty message.
		{"1.18 unsigned partial", session(store.ShapeSQLite, user("u1", "hi"),
			testMessage("a1", "assistant", killed, `{"type":"step-start"}`, `{"type":"reasoning","text":"thin"}`)),
			sent.V118, "0 user [text]\n1 assistant []\n2 user [text]\n", "SF150@messages.1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if v := sent.VersionOf(c.s); v != c.v {
				t.Fatalf("version %s, want %s", v, c.v)
			}
			r := sent.Build(c.s, sent.Options{NextPrompt: true})
			if got := renderRequest(r); got != c.req {
				t.Errorf("request\n%swant\n%s", got, c.req)
			}
			if got := violationCodes(Preflight(c.s, settled())); got != c.codes {
				t.Errorf("violations %q, want %q", got, c.codes)
			}
		})
	}
}

func TestRequestVersionFromSessionRecord(t *testing.T) {
	s := session(store.ShapeSessions)
	if sent.VersionOf(s) != sent.V118 {
		t.Error("sessions tree without a version should use the 1.18 conversion")
	}
	s.Info = &store.Record{Raw: []byte(`{"version":"1.1.65"}`)}
	if sent.VersionOf(s) != sent.V11 {
		t.Error("a 1.1.65 session record should pick the 1.1 conversion")
	}
	s.Store.Shape = store.ShapeStorage
	s.Info = &store.Record{Raw: []byte(`{"version":"1.14.34"}`)}
	if sent.VersionOf(s) != sent.V118 {
		t.Error("a 1.14 session in a storage tree should pick the 1.18 conversion")
	}
	s.Store.Shape = store.ShapeSQLite
	s.Info = &store.Record{Raw: []byte(`{"version":"1.1.65"}`)}
	if sent.VersionOf(s) != sent.V118 {
		t.Error("sqlite stores are always 1.2 or later")
	}
}

func TestBuildRequestToolStatesAndModelSwitch(t *testing.T) {
	other := `{"role":"assistant","providerID":"openai","modelID":"gpt-5","time":{"created":2,"completed":3},"finish":"stop"}`
	s := session(store.ShapeSQLite,
		user("u1", "go"),
		testMessage("a1", "assistant", other, `{"type":"step-start"}`, `{"type":"reasoning","text":"gpt thoughts"}`,
			`{"type":"tool","callID":"c/1","tool":"bash","state":{"status":"running","input":{},"time":{"start":1}}}`,
			`{"type":"tool","callID":"c2","tool":"bash","state":{"status":"error","input":{},"error":"boom","time":{"start":1,"end":2}}}`),
		testMessage("a2", "assistant", other, `{"type":"step-start"}`, `{"type":"text","text":"done"}`),
		user("u2", "more"),
	)
	r := sent.Build(s, sent.Options{})
	// Reasoning of another model is sent as text by 1.18.
	if got, want := renderRequest(r), "0 user [text]\n1 assistant [text tool_use tool_use]\n2 user [tool_result tool_result]\n3 assistant [text]\n4 user [text]\n"; got != want {
		t.Fatalf("request\n%swant\n%s", got, want)
	}
	tr := r.Messages[2].Blocks
	if !tr[0].IsError || !tr[1].IsError || tr[0].ToolUseID != "c_1" {
		t.Errorf("tool results %+v: a running tool and an errored one are sent as errors, ids sanitised for claude", tr)
	}
	// 1.1 keeps it as reasoning without its metadata, which the SDK drops.
	r = sent.Build(s, sent.Options{Version: sent.V11})
	if got := renderRequest(r); !strings.HasPrefix(got, "0 user [text]\n1 assistant [tool_use tool_use]\n") || len(r.Messages[1].Dropped) != 1 {
		t.Errorf("1.1 request\n%s dropped %d", got, len(r.Messages[1].Dropped))
	}
}

func TestBuildRequestCompactionTail(t *testing.T) {
	s := session(store.ShapeSQLite,
		user("u0", "old"),
		testMessage("a0", "assistant", asstBody, `{"type":"text","text":"old answer"}`),
		user("u1", "kept"),
		testMessage("a1", "assistant", asstBody, `{"type":"text","text":"kept answer"}`),
		testMessage("c", "user", userBody, `{"type":"compaction","auto":true,"tail_start_id":"u1"}`),
		testMessage("sum", "assistant", `{"role":"assistant","parentID":"c","summary":true,"finish":"stop","providerID":"anthropic","modelID":"claude-sonnet-4-5"}`, `{"type":"text","text":"summary"}`),
		user("u2", "new"),
	)
	r := sent.Build(s, sent.Options{})
	var got []string
	for _, pm := range r.Messages {
		got = append(got, strings.Join(pm.Sources, "+"))
	}
	if strings.Join(got, " ") != "c sum u1 a1 u2" {
		t.Errorf("order %v, want the compaction and its summary before the kept tail", got)
	}
	if r.Messages[0].Blocks[0].Text != "What did we do so far?" {
		t.Errorf("compaction text %q", r.Messages[0].Blocks[0].Text)
	}
}

func TestPreflightRules(t *testing.T) {
	bedrock := `{"role":"user","model":{"providerID":"amazon-bedrock","modelID":"anthropic.claude-sonnet-4-5"}}`
	bedrockAsst := `{"role":"assistant","providerID":"amazon-bedrock","modelID":"anthropic.claude-sonnet-4-5","time":{"created":2,"completed":3},"finish":"stop"}`
	noThink := `{"role":"assistant","providerID":"anthropic","modelID":"gpt-oss","time":{"created":2}}`
	cases := []struct {
		name  string
		s     *store.Session
		codes string
		msg   string // the message the first violation maps to
		part  string
	}{
		{"final tool loop unsigned", session(store.ShapeSQLite, user("u1", "go"),
			testMessage("a1", "assistant", `{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":2,"completed":3},"finish":"tool-calls"}`,
				`{"type":"step-start"}`, `{"type":"reasoning","text":"partial"}`, toolDone)),
			"SF152@messages.1.content.0", "a1", "a1-c"},
		{"final tool loop signed", session(store.ShapeSQLite, user("u1", "go"),
			testMessage("a1", "assistant", `{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":2,"completed":3},"finish":"tool-calls"}`,
				`{"type":"step-start"}`, `{"type":"reasoning","text":"fine",`+sig+`}`, toolDone)),
			"", "", ""},
		{"thinking after text", session(store.ShapeSQLite, user("u1", "go"),
			testMessage("a1", "assistant", asstBody, `{"type":"text","text":"answer"}`, `{"type":"reasoning","text":"late",`+sig+`}`, `{"type":"text","text":"more"}`), user("u2", "x")),
			"SF153@messages.1.content.0", "a1", "a1-b"},
		{"empty signature", session(store.ShapeSQLite, user("u1", "go"),
			testMessage("a1", "assistant", asstBody, `{"type":"reasoning","text":"t","metadata":{"anthropic":{"signature":""}}}`, `{"type":"text","text":"a"}`)),
			"SF154@messages.1.content.0", "a1", "a1-a"},
		{"whitespace user text", session(store.ShapeSQLite, user("u1", " \n")),
			"SF151@messages.0.content.0", "u1", "u1-a"},
		{"thinking off, unfinished final assistant", session(store.ShapeSQLite,
			testMessage("u1", "user", `{"role":"user","model":{"providerID":"anthropic","modelID":"gpt-oss"}}`, `{"type":"text","text":"go"}`),
			testMessage("a1", "assistant", noThink, `{"type":"reasoning","text":"t","synthetic":true,`+sig+`}`, `{"type":"text","text":"partial"}`)),
			"SF156@messages.1.content.0", "a1", "a1-a"},
		{"thinking off, finished final assistant", session(store.ShapeSQLite,
			testMessage("u1", "user", `{"role":"user","model":{"providerID":"anthropic","modelID":"gpt-oss"}}`, `{"type":"text","text":"go"}`),
			testMessage("a1", "assistant", strings.Replace(noThink, `}}`, `,"completed":3},"finish":"stop"}`, 1), `{"type":"reasoning","text":"t","synthetic":true,`+sig+`}`, `{"type":"text","text":"done"}`)),
			"", "", ""},
		{"prefill on a newer model", session(store.ShapeSQLite,
			testMessage("u1", "user", `{"role":"user","model":{"providerID":"anthropic","modelID":"claude-opus-4-6"}}`, `{"type":"text","text":"go"}`),
			testMessage("a1", "assistant", `{"role":"assistant","providerID":"anthropic","modelID":"claude-opus-4-6","time":{"created":2}}`, `{"type":"text","text":"partial "}`, `{"type":"reasoning","text":"unsigned"}`)),
			"SF158@messages.1.content.0 SF159@messages.1", "a1", "a1-a"},
		{"bedrock blank text", session(store.ShapeStorage,
			testMessage("u1", "user", bedrock, `{"type":"text","text":"go"}`),
			testMessage("a1", "assistant", bedrockAsst, `{"type":"text","text":""}`, `{"type":"text","text":"fine"}`)),
			"SF160@messages.1.content.0", "a1", "a1-a"},
		{"bedrock empty content", session(store.ShapeStorage,
			testMessage("u1", "user", bedrock, `{"type":"text","text":"go"}`),
			testMessage("a1", "assistant", bedrockAsst, `{"type":"reasoning","text":"unsigned"}`)),
			"SF161@messages.1", "a1", ""},
		{"openai tools pair", session(store.ShapeSQLite,
			testMessage("u1", "user", `{"role":"user","model":{"providerID":"openai","modelID":"gpt-5"}}`, `{"type":"text","text":"go"}`),
			testMessage("a1", "assistant", `{"role":"assistant","providerID":"openai","modelID":"gpt-5","finish":"stop","time":{"created":1,"completed":2}}`, toolDone, `{"type":"text","text":"done"}`)),
			"", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vs := Preflight(c.s, settled())
			if got := violationCodes(vs); got != c.codes {
				t.Fatalf("violations %q, want %q\n%s", got, c.codes, renderRequest(sent.Build(c.s, sent.Options{NextPrompt: true})))
			}
			if len(vs) == 0 {
				return
			}
			if vs[0].MessageID != c.msg || vs[0].PartID != c.part {
				t.Errorf("maps to %s/%s, want %s/%s", vs[0].MessageID, vs[0].PartID, c.msg, c.part)
			}
			if vs[0].ProviderError == "" || !strings.HasPrefix(vs[0].ProviderError, vs[0].Index) && strings.Contains(vs[0].ProviderError, "messages.") &&
				!strings.Contains(vs[0].ProviderError, vs[0].Index) {
				t.Errorf("provider error %q does not carry index %s", vs[0].ProviderError, vs[0].Index)
			}
		})
	}
}

func TestPreflightOpenAIPairing(t *testing.T) {
	r := &sent.Request{Kind: sent.Chat, Messages: []sent.Message{
		{Role: "system"},
		{Role: "user", Blocks: []sent.Block{{Type: "text", Text: "go"}}},
		{Role: "assistant", Blocks: []sent.Block{{Type: "tool_use", ToolUseID: "c1", MessageID: "a1", PartID: "p1"}, {Type: "tool_use", ToolUseID: "c2", MessageID: "a1", PartID: "p2"}}},
		{Role: "tool", Blocks: []sent.Block{{Type: "tool_result", ToolUseID: "c1", MessageID: "a1", PartID: "p1"}}},
		{Role: "tool", Blocks: []sent.Block{{Type: "tool_result", ToolUseID: "c9", MessageID: "a1", PartID: "p9"}}},
	}}
	vs := CheckRequest(nil, r, nil)
	if got := violationCodes(vs); got != "SF162@messages[2] SF162@messages[4]" {
		t.Fatalf("violations %q", got)
	}
	if !strings.HasSuffix(vs[0].ProviderError, ": c2") || vs[0].PartID != "p2" {
		t.Errorf("missing result names %q on %s", vs[0].ProviderError, vs[0].PartID)
	}
}

func TestAnthropicToolPairing(t *testing.T) {
	r := &sent.Request{Kind: sent.Anthropic, Thinking: false, Messages: []sent.Message{
		{Role: "user", Blocks: []sent.Block{{Type: "text", Text: "go"}}},
		{Role: "assistant", Blocks: []sent.Block{{Type: "tool_use", ToolUseID: "c1", MessageID: "a1", PartID: "p1"}}},
		{Role: "user", Blocks: []sent.Block{{Type: "text", Text: "x"}, {Type: "tool_result", ToolUseID: "c2", MessageID: "a1", PartID: "p2"}}},
	}}
	vs := CheckRequest(nil, r, nil)
	if got := violationCodes(vs); got != "SF157@messages.1 SF157@messages.2.content.1" {
		t.Fatalf("violations %q", got)
	}
	want := "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: c2. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
	if vs[1].ProviderError != want {
		t.Errorf("error %q", vs[1].ProviderError)
	}
}

func TestDedupeKeepsThePreflightFinding(t *testing.T) {
	s := session(store.ShapeSQLite, user("u1", "go"),
		testMessage("a1", "assistant", asstBody, `{"type":"step-start"}`, toolDone, `{"type":"reasoning","text":"late",`+sig+`}`, `{"type":"text","text":"a"}`),
		testMessage("a2", "assistant", asstBody, `{"type":"step-start"}`, `{"type":"reasoning","text":"t",`+sig+`}`, `{"type":"text","text":"done"}`),
		user("u2", "x"))
	opts := settled()
	opts.Ignore = []string{"SF2"} // the test's ids are not OpenCode's
	fs := CheckSession(s, opts)
	var got []string
	for _, f := range fs {
		got = append(got, f.Code+":"+f.FixedBy)
	}
	if strings.Join(got, " ") != "SF153:SF103" {
		t.Fatalf("findings %v, want the preflight finding only, naming SF103", got)
	}
	f := fs[0]
	if f.Index != "messages.1.content.0" || f.ErrorType != string(opencode.ErrorThinkingBlockOrder) || f.Fix != "moveThinkingFirst" ||
		f.ProviderError != "messages.1.content.0: If an assistant message contains any thinking blocks, the first block must be `thinking` or `redacted_thinking`. Found `tool_use`." {
		t.Errorf("finding %+v", f)
	}
	// With the preflight off, the record rule reports it.
	o := settled()
	o.Ignore = []string{"SF15", "SF2"}
	if fs := CheckSession(s, o); len(fs) != 1 || fs[0].Code != "SF103" || fs[0].FixedBy != "" {
		t.Errorf("without the preflight: %+v", fs)
	}
}

func TestPreflightSkipsStreamingSessions(t *testing.T) {
	now := fmt.Sprint(time.Now().UnixMilli())
	s := session(store.ShapeSQLite, user("u1", " "),
		testMessage("a1", "assistant", `{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":`+now+`}}`, `{"type":"step-start"}`))
	for _, m := range s.Messages {
		m.Modified = time.Now()
	}
	if vs := Preflight(s, &Options{}); len(vs) != 0 {
		t.Errorf("a session still being written was checked: %s", violationCodes(vs))
	}
	if vs := Preflight(s, settled()); len(vs) == 0 {
		t.Error("the same session once settled should be checked")
	}
}

// TestPreflightOrderFirstIsTheAnswer: with several defects, the text-block
// rule comes first, as the Messages API checks it before message order.
func TestPreflightOrderFirstIsTheAnswer(t *testing.T) {
	s := session(store.ShapeSQLite, user("u1", "go"),
		testMessage("a1", "assistant", asstBody, `{"type":"text","text":"answer"}`, `{"type":"reasoning","text":"late",`+sig+`}`, `{"type":"text","text":"x"}`),
		user("u2", "\t"))
	vs := Preflight(s, settled())
	if got := violationCodes(vs); got != "SF151@messages.2.content.0 SF153@messages.1.content.0" {
		t.Fatalf("violations %q", got)
	}
	if vs[0].ProviderError != "messages: text content blocks must contain non-whitespace text" {
		t.Errorf("first error %q", vs[0].ProviderError)
	}
}
