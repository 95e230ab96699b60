package scan

import (
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

// Which calls on a length-cut step SF303 reports, and at which level.
func TestLengthCutToolsAndLevel(t *testing.T) {
	const length = `{"role":"assistant","finish":"length"}`
	cases := []struct {
		name, msg, tool string
		cut, object     bool
	}{
		{"aborted by opencode's cleanup", length, `{"type":"tool","state":{"status":"error","input":{},"error":"Tool execution aborted"}}`, true, true},
		{"still pending", length, `{"type":"tool","state":{"status":"pending","input":{},"raw":"{\"content\":\"abc"}}`, true, true},
		{"half-written input kept as text", length, `{"type":"tool","state":{"status":"error","input":"{\"patchText\":\"*** Begin","error":"Invalid JSON input"}}`, true, false},
		{"completed", length, `{"type":"tool","state":{"status":"completed","input":{},"output":"ok"}}`, false, true},
		{"marked by sessfix", length, `{"type":"tool","state":{"status":"error","input":{},"error":"Tool execution aborted: the model's output hit its length limit"}}`, false, true},
		{"another finish", `{"role":"assistant","finish":"tool-calls"}`, `{"type":"tool","state":{"status":"error","input":{},"error":"Tool execution aborted"}}`, false, true},
	}
	for _, c := range cases {
		m := testMessage("m", "assistant", c.msg, c.tool)
		got := opencode.LengthCutTools(m)
		if (len(got) == 1) != c.cut {
			t.Errorf("%s: cut = %v, want %v", c.name, len(got) == 1, c.cut)
		}
		if opencode.InputIsObject(m.Parts[0]) != c.object {
			t.Errorf("%s: input is object = %v, want %v", c.name, !c.object, c.object)
		}
		// Every call a tool_input_truncated error is about includes the cut ones.
		if c.cut && len(opencode.CutToolInputs(m)) != 1 {
			t.Errorf("%s: CutToolInputs misses the call", c.name)
		}
	}
	// A half-written input is what a tool_input_truncated error is about on
	// any step, not only a length-cut one.
	m := testMessage("m", "assistant", `{"role":"assistant","finish":"tool-calls"}`, `{"type":"tool","state":{"status":"error","input":"{\"a\":","error":"x"}}`)
	if len(opencode.LengthCutTools(m)) != 0 || len(opencode.CutToolInputs(m)) != 1 || !opencode.DefectToolInputCut.Shows(nil, m) {
		t.Error("a half-written input on another step must show the tool_input_truncated defect")
	}
}

// A half-written input is reported at error level with the error type the
// provider's error is classified as; an aborted call at warning level.
func TestLengthCutToolSeverity(t *testing.T) {
	u := testMessage("msg_a00000000001AAAAAAAAAAAAAA", "user", `{"role":"user","time":{"created":1}}`, `{"type":"text","text":"go"}`)
	a := testMessage("msg_a00000000002AAAAAAAAAAAAAA", "assistant",
		`{"role":"assistant","finish":"length","providerID":"openai","modelID":"gpt-5.2","time":{"created":2,"completed":3}}`,
		`{"type":"tool","tool":"write","callID":"c1","state":{"status":"error","input":{},"error":"Tool execution aborted"}}`,
		`{"type":"tool","tool":"patch","callID":"c2","state":{"status":"error","input":"{\"patchText\":\"x","error":"Tool execution aborted"}}`)
	s := &store.Session{ID: "ses_7f0000000000AAAAAAAAAAAAAA", Messages: []*store.Message{u, a}}
	var levels []Severity
	for _, f := range CheckSession(s, &Options{Select: []string{"SF303"}, Now: func() time.Time { return time.UnixMilli(1e13) }}) {
		levels = append(levels, f.Severity)
		if f.Severity == Error && f.ErrorType != string(opencode.ErrorToolInputTruncated) {
			t.Errorf("error-level finding without its error type: %+v", f)
		}
	}
	if len(levels) != 2 || levels[0] != Warning || levels[1] != Error {
		t.Errorf("levels %v, want [warning error]", levels)
	}
}
