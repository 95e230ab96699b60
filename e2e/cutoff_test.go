//go:build acceptance

package e2e

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockopenai"
)

// markerCutOff makes the mock hit the output limit inside a write call.
const markerCutOff = "[[cut-off]]"

// cutOffScript answers the first agent request whose prompt asks for it with
// reasoning and a write call the output limit cuts off halfway through its
// input (Turn.CutOff); every other request as DefaultScript does.
func cutOffScript(r *mockopenai.Request) mockopenai.Turn {
	c := r.Parsed.Conversation()
	if !r.Chat || len(c.ToolResults) > 0 || !strings.Contains(c.Prompt, markerCutOff) {
		return mockopenai.DefaultScript(r)
	}
	content := strings.Repeat("line of the report that goes on and on\n", 40)
	return mockopenai.Turn{CutOff: true, Blocks: []mockopenai.Block{
		{Type: mockopenai.BlockReasoning, Text: "I will write the whole report in one call."},
		{Type: mockopenai.BlockToolCall, ToolName: "write", ToolInput: map[string]any{"filePath": "report.txt", "content": content}},
	}}
}

// TestCutOffToolCall: OpenCode 1.18.33 against a Responses API that stops
// inside a write call's arguments (finish "length"). scan reports the call
// (SF303), fix marks it failed with the cut-off error, and the next resume
// sends that error to the model as the call's result.
func TestCutOffToolCall(t *testing.T) {
	parallel(t)
	acquire(t)
	ctx := testCtx(t, 10*time.Minute)
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_18, Model: opencodetest.OpenAIModel, Timeout: 4 * time.Minute})
	e.OpenAI.SetScript(cutOffScript)
	const prompt = "Write the long report to report.txt " + markerCutOff
	res, err := e.Prompt(ctx, prompt)
	if err != nil {
		t.Fatal(err)
	}
	if res.SessionID == "" {
		t.Fatalf("no session\n%s", res)
	}
	session := res.SessionID
	fs, scan := scanStore(t, e, session)
	var got *finding
	for i := range fs {
		if fs[i].Code == "SF303" {
			got = &fs[i]
		}
	}
	if got == nil {
		t.Fatalf("scan does not report SF303\n%s", scan)
	}
	// What 1.18.33 stored (OBSERVED.md): the message finished "length" and
	// OpenCode's cleanup closed the call with its abort text.
	before, exp, err := e.Export(ctx, session)
	if err != nil || exp.ExitCode != 0 {
		t.Fatalf("opencode export: %v\n%s", err, exp)
	}
	var stored struct {
		Messages []struct {
			Info  map[string]any   `json:"info"`
			Parts []map[string]any `json:"parts"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(before, &stored); err != nil {
		t.Fatal(err)
	}
	seen := false
	for _, m := range stored.Messages {
		for _, p := range m.Parts {
			if p["type"] != "tool" || p["tool"] != "write" {
				continue
			}
			seen = true
			st, _ := p["state"].(map[string]any)
			in, _ := json.Marshal(st["input"])
			t.Logf("stored: finish %v, tool state %v, error %q, input %s", m.Info["finish"], st["status"], st["error"], in)
			if m.Info["finish"] != "length" || st["status"] != "error" || st["error"] != "Tool execution aborted" {
				t.Errorf("stored shape differs from OBSERVED.md: finish %v, status %v, error %v", m.Info["finish"], st["status"], st["error"])
			}
		}
	}
	if !seen || got.Severity != "warning" {
		t.Errorf("no stored write call (%v) or SF303 at %s", seen, got.Severity)
	}
	// On 1.18.33 the session goes on by itself (the call is closed).
	first := resumeVerdict(ctx, t, e, openAICalls, session, "What happened?")
	found, _ := scanStore(t, e, session)
	fix := sessfix(t, e, append([]string{"fix", "--yes"}, append(scanFlags, e.DataDir())...)...)
	if fix.ExitCode != 0 {
		t.Fatalf("fix\n%s", fix)
	}
	if fs, res := scanStore(t, e, session); len(fs) > 0 {
		for _, f := range fs {
			if f.Severity != "info" {
				t.Errorf("after fix: %s %s %s\n%s", f.Severity, f.Code, f.Message, res)
			}
		}
	}
	const next = "Please go on, in smaller steps."
	sentBefore := len(e.OpenAI.Requests())
	if rej := resumeVerdict(ctx, t, e, openAICalls, session, next); rej != "" {
		t.Fatalf("after sessfix fix the resume is rejected: %s\n%s", rej, fix)
	}
	// The model is told why: the call's result OpenCode sends is the
	// cut-off error.
	told := false
	for _, c := range e.OpenAI.Requests()[sentBefore:] {
		told = told || (c.Chat && bytes.Contains(c.Body, []byte("hit its length limit")))
	}
	if !told {
		t.Error("no request of the resume carries the cut-off error as the call's result")
	}
	doc, exp, err := e.Export(ctx, session)
	if err != nil || exp.ExitCode != 0 {
		t.Fatalf("opencode export: %v\n%s", err, exp)
	}
	if !bytes.Contains(doc, []byte("hit its length limit")) {
		t.Errorf("the export does not hold the cut-off error\n%s", doc)
	}
	for _, s := range []string{"Write the long report", next} {
		if !bytes.Contains(doc, []byte(s)) {
			t.Errorf("export lost the user text %q", s)
		}
	}
	recordWedged(t, wedgedRow{
		Case: "length-cut-tool-call", Test: "TestCutOffToolCall", OpenCode: opencodetest.V1_18, Model: e.Model,
		Break: "the Responses API stops inside a write call's arguments (finish `length`); a real run, no edit. OpenCode " +
			"1.18.33 closes the call itself (`Tool execution aborted`), so the resume goes on and SF303 is a warning; the fix " +
			"tells the model why the call failed",
		Before: rejectedAs(first), Scan: codes(codesWithSeverity(found)), Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted",
	})
}
