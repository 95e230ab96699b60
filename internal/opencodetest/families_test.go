//go:build acceptance

package opencodetest

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/mockopenai"
)

// assertOpenAIAccepted fails the test when the OpenAI-shaped mock rejected
// a request (or got none).
func assertOpenAIAccepted(t *testing.T, e *Env) {
	t.Helper()
	reqs := e.OpenAI.Requests()
	if len(reqs) == 0 {
		t.Fatal("OpenCode sent no request to the mock")
	}
	for _, r := range reqs {
		if r.Verdict != mockopenai.Accepted {
			t.Errorf("request %d %s rejected: %d %s", r.Index, r.Path, r.Turn.Status, r.Error)
		}
	}
}

// familyToolLoop runs a bash tool loop in a new session with model and
// checks the stored session's shape: user, a tool step, an answer step,
// each with its reasoning.
func familyToolLoop(t *testing.T, model string) (*Env, []Message) {
	t.Helper()
	e := NewT(t, Options{Model: model})
	res, err := e.Prompt(testCtx(t), "please run it [[tool:bash echo hi]]")
	if err != nil || res.ExitCode != 0 || res.SessionID == "" {
		t.Fatalf("err=%v\n%s", err, res)
	}
	assertOpenAIAccepted(t, e)
	if n := len(e.OpenAI.AgentRequests()); n != 2 {
		t.Fatalf("%d agent requests, want 2", n)
	}
	msgs, err := LoadSession(e.DataDir(), res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role())
	}
	if !slices.Equal(roles, []string{"user", "assistant", "assistant"}) {
		t.Fatalf("roles %v", roles)
	}
	provider, modelID, _ := strings.Cut(model, "/")
	for _, m := range msgs[1:] {
		if Get(m.Data, "providerID") != provider || Get(m.Data, "modelID") != modelID {
			t.Errorf("message %s model %v/%v", m.ID, Get(m.Data, "providerID"), Get(m.Data, "modelID"))
		}
	}
	if got := partTypes(msgs[1]); !slices.Equal(got, []string{"step-start", "reasoning", "tool", "step-finish"}) {
		t.Errorf("tool step parts %v", got)
	}
	if got := partTypes(msgs[2]); !slices.Equal(got, []string{"step-start", "reasoning", "text", "step-finish"}) {
		t.Errorf("answer step parts %v", got)
	}
	if Get(msgs[1].Data, "finish") != "tool-calls" || Get(msgs[2].Data, "finish") != "stop" {
		t.Errorf("finish %v / %v", Get(msgs[1].Data, "finish"), Get(msgs[2].Data, "finish"))
	}
	return e, msgs
}

func partOf(m Message, typ string) Part {
	for _, p := range m.Parts {
		if p.Type() == typ {
			return p
		}
	}
	return Part{Data: map[string]any{}}
}

// TestToolLoopChatCompletions checks what 1.18.33 stores for a tool loop
// with an OpenAI-compatible reasoning model and what it sends back: the
// stored reasoning text as the tool-call message's reasoning_content.
func TestToolLoopChatCompletions(t *testing.T) {
	for _, model := range []string{DeepSeekModel, KimiModel, KimiCustomModel} {
		t.Run(model, func(t *testing.T) {
			t.Parallel()
			e, msgs := familyToolLoop(t, model)
			reasoning := partOf(msgs[1], "reasoning")
			if reasoning.Text() == "" || reasoning.Data["metadata"] != nil {
				t.Errorf("reasoning part %v", reasoning.Data)
			}
			agent := e.OpenAI.AgentRequests()
			for _, r := range agent {
				if r.Parsed.API != mockopenai.ChatCompletions || !r.Parsed.Thinking {
					t.Errorf("request %d: %s thinking=%v", r.Index, r.Parsed.API, r.Parsed.Thinking)
				}
			}
			second := agent[1].Parsed.Completions.Messages
			if len(second) != 4 || second[2].Role != "assistant" || len(second[2].ToolCalls) != 1 || second[3].Role != "tool" {
				b, _ := json.Marshal(second)
				t.Fatalf("second request history %s", b)
			}
			if rc := second[2].ReasoningContent; rc == nil || *rc != reasoning.Text() {
				t.Errorf("reasoning_content %v, want the stored reasoning %q", rc, reasoning.Text())
			}
			if id := second[2].ToolCalls[0].ID; id != Get(partOf(msgs[1], "tool").Data, "callID") {
				t.Errorf("tool call id %s", id)
			}
		})
	}
}

// TestToolLoopResponses checks what 1.18.33 stores for a tool loop with the
// openai provider (item ids and encrypted reasoning in part metadata) and
// what it sends back with store false: reasoning as encrypted content and
// summary, items without ids.
func TestToolLoopResponses(t *testing.T) {
	t.Parallel()
	e, msgs := familyToolLoop(t, OpenAIModel)
	key := e.APIKey("openai")
	for _, m := range msgs[1:] {
		r := partOf(m, "reasoning")
		id, _ := Get(r.Data, "metadata.openai.itemId").(string)
		enc, _ := Get(r.Data, "metadata.openai.reasoningEncryptedContent").(string)
		if !strings.HasPrefix(id, "rs_") || !mockopenai.Verify(e.OpenAI.Secret(), enc, key, "gpt-5.2") {
			t.Errorf("reasoning metadata %v", r.Data["metadata"])
		}
	}
	if id, _ := Get(partOf(msgs[1], "tool").Data, "metadata.openai.itemId").(string); !strings.HasPrefix(id, "fc_") {
		t.Errorf("tool part metadata %v", partOf(msgs[1], "tool").Data["metadata"])
	}
	if id, _ := Get(partOf(msgs[2], "text").Data, "metadata.openai.itemId").(string); !strings.HasPrefix(id, "msg_") {
		t.Errorf("text part metadata %v", partOf(msgs[2], "text").Data["metadata"])
	}
	agent := e.OpenAI.AgentRequests()
	r := agent[1].Parsed.Responses
	if r.Stored() || !r.IncludesEncrypted() || r.Reasoning == nil || r.Reasoning.Effort != "medium" {
		t.Errorf("request options store=%v include=%v reasoning=%+v", r.Stored(), r.Include, r.Reasoning)
	}
	var kinds []string
	for _, it := range r.Input {
		kinds = append(kinds, it.Kind())
		if it.ID != nil {
			t.Errorf("input item %s sent with id %q (store false)", it.Kind(), *it.ID)
		}
	}
	if !slices.Equal(kinds, []string{"message", "message", "reasoning", "function_call", "function_call_output"}) {
		t.Errorf("second request input %v", kinds)
	}
	if enc := r.Input[2].EncryptedContent; enc == nil || *enc != Get(partOf(msgs[1], "reasoning").Data, "metadata.openai.reasoningEncryptedContent") {
		t.Errorf("reasoning sent as %+v", r.Input[2])
	}
}
