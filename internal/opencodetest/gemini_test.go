//go:build acceptance

package opencodetest

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/mockgemini"
)

// geminiRequest is the part of a generateContent body the experiments read.
type geminiRequest struct {
	Contents []mockgemini.Content `json:"contents"`
}

func geminiContents(t *testing.T, o outcome) []mockgemini.Content {
	t.Helper()
	var r geminiRequest
	jsonOf(t, o.Body, &r)
	return r.Contents
}

// geminiToolLoop starts an Env on GoogleModel and runs a healthy
// bash tool loop; it returns the env and the session id.
func geminiToolLoop(t *testing.T) (*Env, string) {
	t.Helper()
	f := NewT(t, Options{Model: GoogleModel})
	res, err := f.Prompt(testCtx(t), "please run it [[tool:bash echo hi]]")
	if err != nil || res.ExitCode != 0 || res.SessionID == "" {
		t.Fatalf("err=%v\n%s", err, res)
	}
	for _, c := range geminiChats(f.Gemini)() {
		if !c.Accepted {
			t.Fatalf("healthy tool loop rejected: %s", c.Error)
		}
	}
	return f, res.SessionID
}

// geminiSignatures returns metadata.google.thoughtSignature of every part
// of the session that has one.
func geminiSignatures(msgs []Message) map[string]string {
	out := map[string]string{}
	for _, m := range msgs {
		for _, p := range m.Parts {
			if s, ok := Get(p.Data, "metadata.google.thoughtSignature").(string); ok {
				out[p.ID] = s
			}
		}
	}
	return out
}

// TestGeminiToolLoop records a healthy Gemini 3 tool loop and checks where
// OpenCode keeps the thought signature and how it replays it.
func TestGeminiToolLoop(t *testing.T) {
	t.Parallel()
	f, id := geminiToolLoop(t)
	msgs := session(t, f, id)
	checkToolLoopWith(t, msgs, func(p Part) bool { return p.Data["metadata"] == nil })
	if got := installedSDKs(t, f); len(got) > 0 {
		t.Errorf("OpenCode installed provider packages: %v", got)
	}
	tool := partsOf(msgs, "tool")[0]
	sig, _ := Get(tool.Data, "metadata.google.thoughtSignature").(string)
	if !mockgemini.ValidSignature(f.Gemini.Secret(), "gemini-3-flash-preview", sig) {
		t.Fatalf("tool part signature %q (metadata %v)", sig, tool.Data["metadata"])
	}
	if sigs := geminiSignatures(msgs); len(sigs) != 1 {
		t.Errorf("signatures stored on %d parts, want only the tool part: %v", len(sigs), sigs)
	}

	chat := geminiChats(f.Gemini)()
	if len(chat) != 2 {
		t.Fatalf("%d chat requests, want 2", len(chat))
	}
	if r := f.Gemini.ChatRequests()[0]; r.Header.Get("x-goog-api-key") != f.APIKey("google") ||
		r.Path != "/v1beta/models/gemini-3-flash-preview:streamGenerateContent" || r.Query != "alt=sse" {
		t.Errorf("request %s?%s key %q", r.Path, r.Query, r.Header.Get("x-goog-api-key"))
	}
	// Step 2 replays step 1: thought text without signature, then the
	// call with the stored signature, no call id; the tool output as
	// functionResponse.response.content.
	c := geminiContents(t, chat[1])
	if len(c) != 3 || c[1].Role != "model" || len(c[1].Parts) != 2 || !c[1].Parts[0].Thought ||
		c[1].Parts[0].ThoughtSignature != "" || c[1].Parts[1].FunctionCall == nil ||
		c[1].Parts[1].FunctionCall.ID != "" || c[1].Parts[1].ThoughtSignature != sig ||
		c[2].Parts[0].FunctionResponse == nil || c[2].Parts[0].FunctionResponse.Text() != "hi\n" {
		t.Errorf("step 2 contents %s", chat[1].Body)
	}
	var req struct {
		GenerationConfig mockgemini.GenerationConfig `json:"generationConfig"`
	}
	jsonOf(t, chat[0].Body, &req)
	if tc := req.GenerationConfig.ThinkingConfig; tc == nil || !tc.IncludeThoughts || tc.ThinkingLevel != "high" {
		t.Errorf("thinkingConfig %+v", tc)
	}

	// A later turn replays the same history and is accepted: signatures in
	// older turns verify.
	o := mustResumeAccepted(t, f, geminiChats(f.Gemini), id, "and now?")
	if c := geminiContents(t, o); len(c) != 5 || c[1].Parts[1].ThoughtSignature != sig || len(c[3].Parts) != 2 {
		t.Errorf("resume contents %s", o.Body)
	}
}

// TestGeminiKill kills OpenCode at each stage of a Gemini stream and
// resumes: 1.18.33 leaves nothing a Gemini 3 model refuses.
func TestGeminiKill(t *testing.T) {
	t.Parallel()
	for _, k := range []struct {
		stage  mockgemini.Stage
		prompt string
		part   string // kill once the last assistant message has one
		parts  []string
		model  int // parts of the killed turn's model content in the resume, -1: left out
	}{
		// Reasoning is written when it ends: the part is still "".
		// (The same holds when killed after the last thought chunk: the
		// reasoning ends only when the first non-thought part arrives.)
		{mockgemini.StageThoughtDelta, "tell me something", "reasoning", []string{"step-start", "reasoning"}, -1},
		// Text is written when it ends: "" (sent as nothing), the thought
		// goes back as a thought part.
		{mockgemini.StageTextDelta, "tell me something", "text", []string{"step-start", "reasoning", "text"}, 1},
		// The call is stored pending, input {} and no signature; it goes
		// back unsigned with the interrupted-tool response.
		{mockgemini.StageFunctionCall, "run [[tool:bash sleep 30]]", "tool", []string{"step-start", "reasoning", "tool"}, 1},
	} {
		t.Run(string(k.stage), func(t *testing.T) {
			t.Parallel()
			f := NewT(t, Options{Model: GoogleModel})
			pause := f.Gemini.Pause(k.stage, mockgemini.ChatRequest)
			defer pause.Release()
			proc, err := f.StartPrompt("", k.prompt)
			if err != nil {
				t.Fatal(err)
			}
			if err := proc.KillAt(testCtx(t), pause, stored(f, k.part)); err != nil {
				t.Fatal(err)
			}
			id := onlySession(t, f)
			killed, _ := lastAssistant(f.DataDir(), id)
			t.Logf("after SIGKILL at %s:\n%s", k.stage, dump(killed))
			if got := partTypes(killed); !slices.Equal(got, k.parts) {
				t.Errorf("parts %v, want %v", got, k.parts)
			}
			if Get(killed.Data, "error") != nil || Get(killed.Data, "time.completed") != nil {
				t.Errorf("killed message closed: %v", killed.Data)
			}
			o := mustResumeAccepted(t, f, geminiChats(f.Gemini), id, "are you there?")
			c := geminiContents(t, o)
			t.Logf("resume contents: %s", mustJSON(c))
			models := 0
			for _, x := range c {
				if x.Role == "model" {
					models++
					if len(x.Parts) != k.model {
						t.Errorf("model content %s, want %d parts", mustJSON(x), k.model)
					}
				}
			}
			if want := min(k.model, 0) + 1; models != want {
				t.Errorf("%d model contents, want %d", models, want)
			}
		})
	}
}

// TestGeminiParallelCalls: Gemini signs only the first of parallel calls;
// OpenCode keeps the signature on that call's part and sends the calls in
// order, so the next step is accepted.
func TestGeminiParallelCalls(t *testing.T) {
	t.Parallel()
	f := NewT(t, Options{Model: GoogleModel})
	res, err := f.Prompt(testCtx(t), "run both [[tool:bash echo one]] [[tool:bash echo two]]")
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%v\n%s", err, res)
	}
	chat := geminiChats(f.Gemini)()
	if len(chat) != 2 || !chat[1].Accepted {
		t.Fatalf("chat requests %+v", chat)
	}
	c := geminiContents(t, chat[1])
	if len(c) != 3 || len(c[1].Parts) != 3 || c[1].Parts[1].ThoughtSignature == "" || c[1].Parts[2].ThoughtSignature != "" ||
		len(c[2].Parts) != 2 {
		t.Errorf("step 2 contents %s", mustJSON(c))
	}
	tools := partsOf(session(t, f, res.SessionID), "tool")
	if len(tools) != 2 || Get(tools[0].Data, "metadata.google.thoughtSignature") == nil || tools[1].Data["metadata"] != nil {
		t.Errorf("tool parts %v", tools)
	}
}

// TestGeminiModelSwitch switches a session that made tool calls with
// Claude to Gemini 3: OpenCode sends the other model's turns without
// provider metadata (calls unsigned, reasoning as plain text), outside the
// current turn, and Gemini accepts them.
func TestGeminiModelSwitch(t *testing.T) {
	t.Parallel()
	f := NewT(t, Options{Providers: []string{"google"}})
	res, err := f.Prompt(testCtx(t), "run [[tool:bash echo one]]")
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%v\n%s", err, res)
	}
	o := mustResumeAccepted(t, f, geminiChats(f.Gemini), res.SessionID, "again [[tool:bash echo two]]", "--model", GoogleModel)
	c := geminiContents(t, o)
	t.Logf("first Gemini request: %s", mustJSON(c))
	if len(c) < 4 || c[1].Role != "model" {
		t.Fatalf("contents %s", mustJSON(c))
	}
	for _, p := range c[1].Parts {
		if p.Thought || p.ThoughtSignature != "" {
			t.Errorf("Claude's turn sent with a thought or signature: %s", mustJSON(p))
		}
	}
	if c[1].Parts[0].Text == nil || c[1].Parts[1].FunctionCall == nil {
		t.Errorf("Claude's turn %s, want its reasoning as text, then the call", mustJSON(c[1]))
	}
	// Gemini's own call in the new turn carries its signature in the
	// next step.
	all := geminiChats(f.Gemini)()
	last := geminiContents(t, all[len(all)-1])
	if m := last[len(last)-2]; m.Role != "model" || m.Parts[len(m.Parts)-1].ThoughtSignature == "" {
		t.Errorf("Gemini's call unsigned: %s", mustJSON(m))
	}
}

// TestGeminiLostSignature removes the stored signature of a finished call:
// OpenCode then sends the call unsigned (its bundled @ai-sdk/google does
// not put Google's placeholder in), which Gemini 3 accepts outside the
// current turn.
func TestGeminiLostSignature(t *testing.T) {
	t.Parallel()
	f, id := geminiToolLoop(t)
	tool := partsOf(session(t, f, id), "tool")[0]
	if err := EditPart(f.DataDir(), tool.ID, func(d map[string]any) { delete(d, "metadata") }); err != nil {
		t.Fatal(err)
	}
	o := mustResumeAccepted(t, f, geminiChats(f.Gemini), id, "and now?")
	if c := geminiContents(t, o); c[1].Parts[1].FunctionCall == nil || c[1].Parts[1].ThoughtSignature != "" {
		t.Errorf("call sent as %s", mustJSON(c[1]))
	}
}

// TestGeminiForeignSignature resumes a session whose signatures another
// account (the mock's secret) issued: every resume is "Corrupted thought
// signature." until the stored signatures are removed, or replaced by
// Google's placeholder.
func TestGeminiForeignSignature(t *testing.T) {
	t.Parallel()
	f, id := geminiToolLoop(t)
	f.Gemini.SetSecret([]byte("another account"))
	failed := mustResumeRejected(t, f, geminiChats(f.Gemini), id, "and now?", mockgemini.TextCorruptedSignature, mockgemini.TextCorruptedSignature)
	if parts := partTypes(failed); len(parts) != 0 {
		t.Errorf("failed attempt has parts %v", parts)
	}
	// A second resume fails the same way: the failed attempt is left out
	// of the history, the signature is not.
	mustResumeRejected(t, f, geminiChats(f.Gemini), id, "still there?", mockgemini.TextCorruptedSignature, mockgemini.TextCorruptedSignature)

	// Repair 1: remove metadata.google from the tool parts: the call goes
	// unsigned.
	editTools := func(edit func(d map[string]any)) {
		t.Helper()
		for _, p := range partsOf(session(t, f, id), "tool") {
			if err := EditPart(f.DataDir(), p.ID, edit); err != nil {
				t.Fatal(err)
			}
		}
	}
	editTools(func(d map[string]any) { delete(d, "metadata") })
	o := mustResumeAccepted(t, f, geminiChats(f.Gemini), id, "fixed? [[tool:bash echo again]]")
	c := geminiContents(t, o)
	if call := c[1].Parts[1]; call.FunctionCall == nil || call.ThoughtSignature != "" {
		t.Errorf("repaired call sent as %s", mustJSON(call))
	}
	if !slices.ContainsFunc(c, func(x mockgemini.Content) bool {
		return x.Role == "user" && len(x.Parts) == 1 && x.Parts[0].Text != nil && *x.Parts[0].Text == `"and now?"`
	}) {
		t.Errorf("the prompts of the failed attempts are gone from the history: %s", mustJSON(c))
	}

	// Repair 2, after another account switch: Google's placeholder as the
	// stored signature of every call (the new turn's call included).
	f.Gemini.SetSecret([]byte("a third account"))
	mustResumeRejected(t, f, geminiChats(f.Gemini), id, "and now?", mockgemini.TextCorruptedSignature, mockgemini.TextCorruptedSignature)
	editTools(func(d map[string]any) {
		d["metadata"] = map[string]any{"google": map[string]any{"thoughtSignature": mockgemini.SkipSignature}}
	})
	o = mustResumeAccepted(t, f, geminiChats(f.Gemini), id, "fixed again?")
	for _, x := range geminiContents(t, o) {
		for _, p := range x.Parts {
			if p.FunctionCall != nil && p.ThoughtSignature != mockgemini.SkipSignature {
				t.Errorf("call sent as %s", mustJSON(p))
			}
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
