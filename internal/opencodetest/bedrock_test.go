//go:build acceptance

package opencodetest

import (
	"slices"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/sessfix/sessfix/internal/opencodetest/mockbedrock"
)

func bedrockMessages(t *testing.T, o outcome) []mockbedrock.Message {
	t.Helper()
	var r mockbedrock.ConverseRequest
	jsonOf(t, o.Body, &r)
	return r.Messages
}

// blocks lists the kinds of a Converse message's content blocks
// (cachePoint left out).
func blocks(m mockbedrock.Message) []string {
	var out []string
	for _, b := range m.Content {
		switch {
		case b.Text != nil:
			out = append(out, "text")
		case b.ReasoningContent != nil:
			out = append(out, "reasoning")
		case b.ToolUse != nil:
			out = append(out, "toolUse")
		case b.ToolResult != nil:
			out = append(out, "toolResult")
		}
	}
	return out
}

// bedrockToolLoop starts an Env on BedrockModel and runs a healthy
// bash tool loop; it returns the env and the session id.
func bedrockToolLoop(t *testing.T) (*Env, string) {
	t.Helper()
	f := NewT(t, Options{Model: BedrockModel})
	res, err := f.Prompt(testCtx(t), "please run it [[tool:bash echo hi]]")
	if err != nil || res.ExitCode != 0 || res.SessionID == "" {
		t.Fatalf("err=%v\n%s", err, res)
	}
	for _, c := range bedrockChats(f.Bedrock)() {
		if !c.Accepted {
			t.Fatalf("healthy tool loop rejected: %s", c.Error)
		}
	}
	return f, res.SessionID
}

// bedrockStored is what OpenCode stores as error.data.message for a
// ConverseStream rejection: @ai-sdk/amazon-bedrock formats it as
// "<body.type>: <body.message>", and Bedrock's error body has no type.
func bedrockStored(msg string) string { return "undefined: " + msg }

// bedrockSigned reports whether a reasoning part carries a signature the
// Bedrock mock issued for its text.
func bedrockSigned(f *Env) func(p Part) bool {
	return func(p Part) bool {
		sig, _ := Get(p.Data, "metadata.bedrock.signature").(string)
		return mockbedrock.ValidSignature(f.Bedrock.Secret(), p.Text(), sig)
	}
}

// excludeTurn closes an assistant message the way sessfix's
// excludeMessage does (error UnknownError): OpenCode leaves messages with
// such an error out of every later request.
func excludeTurn(t *testing.T, e *Env, messageID, reason string) {
	t.Helper()
	err := EditMessage(e.DataDir(), messageID, func(d map[string]any) {
		d["error"] = map[string]any{"name": "UnknownError", "data": map[string]any{"message": "excluded by sessfix: " + reason}}
		if Get(d, "time.completed") == nil {
			d["time"].(map[string]any)["completed"] = Get(d, "time.created")
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestBedrockToolLoop records a healthy Claude-on-Bedrock tool loop with
// reasoning and checks where OpenCode keeps the reasoning signature and how
// it replays it.
func TestBedrockToolLoop(t *testing.T) {
	t.Parallel()
	f, id := bedrockToolLoop(t)
	msgs := session(t, f, id)
	checkToolLoopWith(t, msgs, bedrockSigned(f))
	if got := installedSDKs(t, f); len(got) > 0 {
		t.Errorf("OpenCode installed provider packages: %v", got)
	}

	chat := bedrockChats(f.Bedrock)()
	if len(chat) != 2 {
		t.Fatalf("%d chat requests, want 2", len(chat))
	}
	if r := f.Bedrock.ChatRequests()[0]; r.Header.Get("Authorization") != "Bearer "+f.APIKey("amazon-bedrock") ||
		r.Path != "/model/us.anthropic.claude-sonnet-4-5-20250929-v1:0/converse-stream" {
		t.Errorf("request %s auth %q", r.Path, r.Header.Get("Authorization"))
	}
	var req mockbedrock.ConverseRequest
	jsonOf(t, chat[0].Body, &req)
	if !req.ThinkingEnabled() || string(req.AdditionalModelRequestFields["thinking"]) != `{"type":"enabled","budget_tokens":16000}` {
		t.Errorf("additionalModelRequestFields %s", mustJSON(req.AdditionalModelRequestFields))
	}
	// Step 2 replays step 1 as [reasoningText {text, signature}, toolUse]
	// and the output as a toolResult without status.
	m := bedrockMessages(t, chat[1])
	if len(m) != 3 || !slices.Equal(blocks(m[1]), []string{"reasoning", "toolUse"}) || !slices.Equal(blocks(m[2]), []string{"toolResult"}) ||
		m[1].Content[0].ReasoningContent.ReasoningText.Signature != Get(partsOf(msgs, "reasoning")[0].Data, "metadata.bedrock.signature") ||
		m[2].Content[0].ToolResult.Status != "" || m[2].Content[0].ToolResult.Text() != "hi\n" {
		t.Errorf("step 2 messages %s", mustJSON(m))
	}
	o := mustResumeAccepted(t, f, bedrockChats(f.Bedrock), id, "and now?")
	if m := bedrockMessages(t, o); len(m) != 5 || !slices.Equal(blocks(m[3]), []string{"reasoning", "text"}) {
		t.Errorf("resume messages %s", mustJSON(m))
	}
}

// TestBedrockKill kills OpenCode at each stage of a ConverseStream answer
// and resumes.
func TestBedrockKill(t *testing.T) {
	t.Parallel()
	for _, k := range []struct {
		name   string
		stage  mockbedrock.Stage
		prompt string
		ready  func(e *Env) func() bool
		parts  []string
		sent   []string // the killed turn as sent on resume; nil: left out
	}{
		// Reasoning is written when it ends: the part is "" and unsigned,
		// so OpenCode leaves it and then the whole turn out.
		{"mid-reasoning", mockbedrock.StageReasoningDelta, "tell me something", func(e *Env) func() bool { return stored(e, "reasoning") },
			[]string{"step-start", "reasoning"}, nil},
		// The call is stored pending with input {}; it goes back with the
		// interrupted-tool result, merged with the new prompt into one
		// user message, after the signed reasoning.
		{"tool pending", mockbedrock.StageToolUse, "run [[tool:bash sleep 30]]", func(e *Env) func() bool { return stored(e, "tool") },
			[]string{"step-start", "reasoning", "tool"}, []string{"reasoning", "toolUse"}},
		{"tool running", mockbedrock.StageMessageStop, "run [[tool:bash sleep 30]]", func(e *Env) func() bool { return toolRunning(e) },
			[]string{"step-start", "reasoning", "tool"}, []string{"reasoning", "toolUse"}},
	} {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			f := NewT(t, Options{Model: BedrockModel})
			pause := f.Bedrock.Pause(k.stage, mockbedrock.ChatRequest)
			defer pause.Release()
			proc, err := f.StartPrompt("", k.prompt)
			if err != nil {
				t.Fatal(err)
			}
			if err := proc.KillAt(testCtx(t), pause, k.ready(f)); err != nil {
				t.Fatal(err)
			}
			id := onlySession(t, f)
			killed, _ := lastAssistant(f.DataDir(), id)
			t.Logf("after SIGKILL at %s:\n%s", k.stage, dump(killed))
			if got := partTypes(killed); !slices.Equal(got, k.parts) {
				t.Errorf("parts %v, want %v", got, k.parts)
			}
			o := mustResumeAccepted(t, f, bedrockChats(f.Bedrock), id, "are you there?")
			m := bedrockMessages(t, o)
			t.Logf("resume messages: %s", mustJSON(m))
			if k.sent == nil {
				if len(m) != 1 {
					t.Errorf("killed turn sent: %s", mustJSON(m))
				}
				return
			}
			if len(m) != 3 || !slices.Equal(blocks(m[1]), k.sent) {
				t.Errorf("killed turn sent as %v, want %v", blocks(m[1]), k.sent)
			}
		})
	}
}

// TestBedrockKillMidText: killed mid-text, the turn keeps its signed
// reasoning and a "" text part (text is written when it ends). OpenCode
// drops the empty text, so the turn goes back as reasoning alone, which
// Claude refuses: every resume fails until the reasoning is stripped (the
// turn is then left out) or the text part gets non-blank text.
func TestBedrockKillMidText(t *testing.T) {
	t.Parallel()
	for _, repair := range []struct {
		name string
		fix  func(t *testing.T, e *Env, killed Message)
		sent []string // the repaired turn as sent; nil: left out
	}{
		{"strip reasoning", func(t *testing.T, e *Env, killed Message) {
			for _, p := range partsOf([]Message{killed}, "reasoning") {
				if err := EditPart(e.DataDir(), p.ID, func(d map[string]any) { delete(d, "metadata") }); err != nil {
					t.Fatal(err)
				}
			}
		}, nil},
		{"non-blank text", func(t *testing.T, e *Env, killed Message) {
			text := partsOf([]Message{killed}, "text")[0]
			if err := EditPart(e.DataDir(), text.ID, func(d map[string]any) { d["text"] = "[interrupted]" }); err != nil {
				t.Fatal(err)
			}
		}, []string{"reasoning", "text"}},
		{"exclude the turn", func(t *testing.T, e *Env, killed Message) {
			excludeTurn(t, e, killed.ID, "cut off mid-text")
		}, nil},
	} {
		t.Run(repair.name, func(t *testing.T) {
			t.Parallel()
			f := NewT(t, Options{Model: BedrockModel})
			pause := f.Bedrock.Pause(mockbedrock.StageTextDelta, mockbedrock.ChatRequest)
			defer pause.Release()
			proc, err := f.StartPrompt("", "tell me something")
			if err != nil {
				t.Fatal(err)
			}
			if err := proc.KillAt(testCtx(t), pause, stored(f, "text")); err != nil {
				t.Fatal(err)
			}
			id := onlySession(t, f)
			killed, _ := lastAssistant(f.DataDir(), id)
			if got := partTypes(killed); !slices.Equal(got, []string{"step-start", "reasoning", "text"}) || partsOf([]Message{killed}, "text")[0].Text() != "" {
				t.Fatalf("killed turn:\n%s", dump(killed))
			}
			want := mockanthropic.MsgFinalBlockThinking(1)
			mustResumeRejected(t, f, bedrockChats(f.Bedrock), id, "are you there?", want, bedrockStored(want))

			repair.fix(t, f, killed)
			o := mustResumeAccepted(t, f, bedrockChats(f.Bedrock), id, "fixed?")
			m := bedrockMessages(t, o)
			if repair.sent == nil {
				if len(m) != 1 {
					t.Errorf("killed turn still sent: %s", mustJSON(m))
				}
				return
			}
			if len(m) != 3 || !slices.Equal(blocks(m[1]), repair.sent) {
				t.Errorf("repaired turn sent as %s", mustJSON(m))
			}
		})
	}
}

// toolRunning reports whether the only session's last tool part is running.
func toolRunning(e *Env) func() bool {
	return func() bool {
		ids, _ := Sessions(e.DataDir())
		if len(ids) != 1 {
			return false
		}
		m, ok := lastAssistant(e.DataDir(), ids[0])
		if !ok {
			return false
		}
		for _, p := range m.Parts {
			if p.Type() == "tool" && Get(p.Data, "state.status") == "running" {
				return true
			}
		}
		return false
	}
}

// TestBedrockBlankText: a whitespace-only text block next to signed
// reasoning is stored as is and sent back as is (the SDK keeps blank text
// when the message has reasoning), so the very next step fails and so does
// every resume, until the text part is removed or given non-blank text.
func TestBedrockBlankText(t *testing.T) {
	t.Parallel()
	for _, repair := range []struct {
		name        string
		resumeFirst bool // also check that a plain resume fails
		fix         func(t *testing.T, e *Env, text Part)
		sent        []string // the repaired turn as sent
	}{
		{"delete the text part", true, func(t *testing.T, e *Env, text Part) {
			if err := DeletePart(e.DataDir(), text.ID); err != nil {
				t.Fatal(err)
			}
		}, []string{"reasoning", "toolUse"}},
		{"non-blank text", false, func(t *testing.T, e *Env, text Part) {
			if err := EditPart(e.DataDir(), text.ID, func(d map[string]any) { d["text"] = "[no text]" }); err != nil {
				t.Fatal(err)
			}
		}, []string{"reasoning", "text", "toolUse"}},
	} {
		t.Run(repair.name, func(t *testing.T) {
			t.Parallel()
			f := NewT(t, Options{Model: BedrockModel})
			f.Bedrock.SetScript(mockbedrock.BlankTextScript)
			res, err := f.Prompt(testCtx(t), "please run it")
			if err != nil {
				t.Fatal(err)
			}
			id := res.SessionID
			want := mockbedrock.MsgBlankText(1, 1)
			chat := bedrockChats(f.Bedrock)()
			if res.ExitCode == 0 || len(chat) != 2 || chat[1].Accepted || chat[1].Error != want {
				t.Fatalf("the step after the blank text: %+v\n%s", chat, res)
			}
			msgs := session(t, f, id)
			text := partsOf(msgs, "text")[0]
			if text.Text() != "\n\n" {
				t.Fatalf("stored text %q", text.Text())
			}
			// OpenCode stores the SDK's message: "<type>: <message>", and the
			// body Bedrock sent.
			failed := msgs[len(msgs)-1]
			if Get(failed.Data, "error.name") != "APIError" || Get(failed.Data, "error.data.message") != bedrockStored(want) ||
				Get(failed.Data, "error.data.responseBody") != `{"message":"`+want+`"}` {
				t.Errorf("stored error %v", Get(failed.Data, "error"))
			}
			if repair.resumeFirst {
				mustResumeRejected(t, f, bedrockChats(f.Bedrock), id, "and now?", want, bedrockStored(want))
			}

			repair.fix(t, f, text)
			o := mustResumeAccepted(t, f, bedrockChats(f.Bedrock), id, "fixed?")
			if m := bedrockMessages(t, o); !slices.Equal(blocks(m[1]), repair.sent) {
				t.Errorf("repaired turn sent as %v", blocks(m[1]))
			}
		})
	}
}

// TestBedrockEmptyToolError: a tool part that failed with an empty error
// goes back as a toolResult with one empty text block and no status, which
// Converse accepts; the "cannot be empty when status value is error" rule
// cannot be reached through OpenCode 1.18.33.
func TestBedrockEmptyToolError(t *testing.T) {
	t.Parallel()
	f, id := bedrockToolLoop(t)
	tool := partsOf(session(t, f, id), "tool")[0]
	err := EditPart(f.DataDir(), tool.ID, func(d map[string]any) {
		st := d["state"].(map[string]any)
		st["status"] = "error"
		st["error"] = ""
		delete(st, "output")
	})
	if err != nil {
		t.Fatal(err)
	}
	o := mustResumeAccepted(t, f, bedrockChats(f.Bedrock), id, "and now?")
	r := bedrockMessages(t, o)[2].Content[0].ToolResult
	if r == nil || r.Status != "" || len(r.Content) != 1 || r.Text() != "" {
		t.Errorf("tool result sent as %s", mustJSON(r))
	}
}

// TestBedrockModelSwitch switches a session with Claude tool calls on the
// Anthropic API to Claude on Bedrock: the other provider's turns go without
// metadata (reasoning as plain text), and Bedrock accepts them.
func TestBedrockModelSwitch(t *testing.T) {
	t.Parallel()
	f := NewT(t, Options{Providers: []string{"amazon-bedrock"}})
	res, err := f.Prompt(testCtx(t), "run [[tool:bash echo one]]")
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%v\n%s", err, res)
	}
	o := mustResumeAccepted(t, f, bedrockChats(f.Bedrock), res.SessionID, "again [[tool:bash echo two]]", "--model", BedrockModel)
	m := bedrockMessages(t, o)
	t.Logf("first Bedrock request: %s", mustJSON(m))
	if len(m) < 4 || !slices.Equal(blocks(m[1]), []string{"text", "toolUse"}) {
		t.Errorf("Anthropic turn sent as %v", blocks(m[1]))
	}
}

// TestBedrockForeignSignature resumes a session whose reasoning another
// account (the mock's secret) signed. Stripping the reasoning's signature
// (OpenCode then leaves the reasoning out) repairs a finished tool loop;
// a tool loop cut off by a kill also needs its last turn excluded, since
// Claude then wants that turn to start with reasoning.
func TestBedrockForeignSignature(t *testing.T) {
	t.Parallel()
	stripReasoning := func(t *testing.T, e *Env, id string) {
		for _, p := range partsOf(session(t, e, id), "reasoning") {
			if err := EditPart(e.DataDir(), p.ID, func(d map[string]any) { delete(d, "metadata") }); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Run("finished tool loop", func(t *testing.T) {
		t.Parallel()
		f, id := bedrockToolLoop(t)
		f.Bedrock.SetSecret([]byte("another account"))
		mustResumeRejected(t, f, bedrockChats(f.Bedrock), id, "and now?", mockanthropic.MsgInvalidSignature(1, 0), bedrockStored(mockanthropic.MsgInvalidSignature(1, 0)))
		stripReasoning(t, f, id)
		o := mustResumeAccepted(t, f, bedrockChats(f.Bedrock), id, "fixed?")
		if m := bedrockMessages(t, o); !slices.Equal(blocks(m[1]), []string{"toolUse"}) || !slices.Equal(blocks(m[3]), []string{"text"}) {
			t.Errorf("stripped turns sent as %v / %v", blocks(m[1]), blocks(m[3]))
		}
	})
	t.Run("tool loop cut off", func(t *testing.T) {
		t.Parallel()
		f := NewT(t, Options{Model: BedrockModel})
		pause := f.Bedrock.Pause(mockbedrock.StageMessageStop, mockbedrock.ChatRequest)
		defer pause.Release()
		proc, err := f.StartPrompt("", "run [[tool:bash sleep 30]]")
		if err != nil {
			t.Fatal(err)
		}
		if err := proc.KillAt(testCtx(t), pause, toolRunning(f)); err != nil {
			t.Fatal(err)
		}
		id := onlySession(t, f)
		f.Bedrock.SetSecret([]byte("another account"))
		mustResumeRejected(t, f, bedrockChats(f.Bedrock), id, "and now?", mockanthropic.MsgInvalidSignature(1, 0), bedrockStored(mockanthropic.MsgInvalidSignature(1, 0)))
		stripReasoning(t, f, id)
		mustResumeRejected(t, f, bedrockChats(f.Bedrock), id, "and now?", mockanthropic.MsgExpectedThinking(1, "tool_use"), bedrockStored(mockanthropic.MsgExpectedThinking(1, "tool_use")))
		killed := session(t, f, id)[1]
		excludeTurn(t, f, killed.ID, "its reasoning was signed by another account")
		o := mustResumeAccepted(t, f, bedrockChats(f.Bedrock), id, "fixed?")
		if m := bedrockMessages(t, o); len(m) != 1 {
			t.Errorf("messages %s, want the prompts merged into one user message", mustJSON(m))
		}
	})
}
