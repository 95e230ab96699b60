//go:build acceptance

package opencodetest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/sessfix/sessfix/internal/opencodetest/mockopenai"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// partTypes lists the part types of a message in order.
func partTypes(m Message) []string {
	var out []string
	for _, p := range m.Parts {
		out = append(out, p.Type())
	}
	return out
}

func assertAllAccepted(t *testing.T, e *Env) {
	t.Helper()
	reqs := e.Mock.Requests()
	if len(reqs) == 0 {
		t.Fatal("OpenCode sent no request to the mock")
	}
	for _, r := range reqs {
		if r.Verdict != mockanthropic.Accepted {
			t.Errorf("request %d %s rejected: %s", r.Index, r.Path, r.Error)
		}
	}
}

// checkToolLoop checks the shape of a healthy tool-loop session whose
// reasoning mockanthropic signed.
func checkToolLoop(t *testing.T, msgs []Message) {
	t.Helper()
	checkToolLoopWith(t, msgs, func(p Part) bool {
		sig, _ := Get(p.Data, "metadata.anthropic.signature").(string)
		return mockanthropic.ValidSignature(mockanthropic.DefaultSecret, p.Text(), sig)
	})
}

// checkToolLoopWith checks the shape of a healthy tool-loop session of any
// provider family; reasoningOK checks each reasoning part.
func checkToolLoopWith(t *testing.T, msgs []Message, reasoningOK func(p Part) bool) {
	t.Helper()
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role())
	}
	if !slices.Equal(roles, []string{"user", "assistant", "assistant"}) {
		t.Fatalf("roles %v", roles)
	}
	first, second := msgs[1], msgs[2]
	if got := partTypes(first); !slices.Equal(got, []string{"step-start", "reasoning", "tool", "step-finish"}) {
		t.Errorf("tool step parts %v", got)
	}
	if got := partTypes(second); !slices.Equal(got, []string{"step-start", "reasoning", "text", "step-finish"}) {
		t.Errorf("answer step parts %v", got)
	}
	for _, m := range msgs[1:] {
		for _, p := range m.Parts {
			switch p.Type() {
			case "reasoning":
				if p.Text() == "" || !reasoningOK(p) {
					t.Errorf("reasoning part %v", p.Data)
				}
			case "tool":
				if Get(p.Data, "state.status") != "completed" || Get(p.Data, "tool") != "bash" {
					t.Errorf("tool part %v", p.Data)
				}
				if out, _ := Get(p.Data, "state.output").(string); !strings.Contains(out, "hi") {
					t.Errorf("tool output %q", out)
				}
			case "text":
				if !strings.Contains(p.Text(), "hi") {
					t.Errorf("text %q", p.Text())
				}
			}
		}
		if Get(m.Data, "time.completed") == nil || Get(m.Data, "finish") == nil {
			t.Errorf("assistant %s not finished: %v", m.ID, m.Data)
		}
	}
	if Get(first.Data, "finish") != "tool-calls" || Get(second.Data, "finish") != "stop" {
		t.Errorf("finish %v / %v", Get(first.Data, "finish"), Get(second.Data, "finish"))
	}
}

// checkToolLoopRequests checks what OpenCode sent for a tool loop.
func checkToolLoopRequests(t *testing.T, e *Env) {
	t.Helper()
	chat := e.Mock.ChatRequests()
	if len(chat) != 2 {
		t.Fatalf("%d chat requests, want 2", len(chat))
	}
	for _, r := range chat {
		if !r.Parsed.ThinkingEnabled() || r.Parsed.Thinking.BudgetTokens != 16000 {
			t.Errorf("request %d thinking %+v", r.Index, r.Parsed.Thinking)
		}
		if r.Path != "/v1/messages" {
			t.Errorf("path %s", r.Path)
		}
	}
	second := chat[1].Parsed.Messages
	if len(second) != 3 || second[1].Role != "assistant" || second[1].Content[0].Type != "thinking" ||
		second[1].Content[1].Type != "tool_use" || second[2].Content[0].Type != "tool_result" {
		b, _ := json.Marshal(second)
		t.Errorf("second request history %s", b)
	}
}

// runToolLoop runs a bash tool loop in a new session on version and checks
// what OpenCode sent the mock for it.
func runToolLoop(t *testing.T, version string) (*Env, *Result) {
	t.Helper()
	e := NewT(t, Options{Version: version})
	res, err := e.Prompt(testCtx(t), "please run it [[tool:bash echo hi]]")
	if err != nil || res.ExitCode != 0 || res.SessionID == "" {
		t.Fatalf("err=%v\n%s", err, res)
	}
	t.Logf("opencode run took %s", res.Duration)
	assertAllAccepted(t, e)
	checkToolLoopRequests(t, e)
	return e, res
}

func TestToolLoop_1_18(t *testing.T) {
	t.Parallel()
	e, res := runToolLoop(t, V1_18)
	if _, err := os.Stat(e.DBPath()); err != nil {
		t.Fatalf("no database: %v", err)
	}
	tables, err := Tables(e.DBPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"session", "message", "part"} {
		if !slices.Contains(tables, want) {
			t.Errorf("table %s missing from %v", want, tables)
		}
	}
	msgs, err := LoadSession(e.DataDir(), res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	checkToolLoop(t, msgs)

	doc, xres, err := e.Export(testCtx(t), res.SessionID)
	if err != nil {
		t.Fatalf("export: %v\n%s", err, xres)
	}
	var exp struct {
		Info     map[string]any
		Messages []struct {
			Info  map[string]any
			Parts []map[string]any
		}
	}
	if err := json.Unmarshal(doc, &exp); err != nil || len(exp.Messages) != 3 || exp.Info["id"] != res.SessionID {
		t.Errorf("export: %v %s", err, doc)
	}
	if dir := exp.Info["directory"]; dir != e.ProjectDir {
		t.Errorf("session directory %v, want %s", dir, e.ProjectDir)
	}
}

func TestToolLoop_1_1(t *testing.T) {
	t.Parallel()
	e, res := runToolLoop(t, V1_1)
	if _, err := os.Stat(e.DBPath()); err == nil {
		t.Errorf("1.1.65 created %s", e.DBPath())
	}
	for _, p := range []string{
		filepath.Join("session", "global", res.SessionID+".json"),
		filepath.Join("message", res.SessionID),
	} {
		if _, err := os.Stat(filepath.Join(e.StorageDir(), p)); err != nil {
			t.Errorf("storage: %v", err)
		}
	}
	msgs, err := LoadSession(e.DataDir(), res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	checkToolLoop(t, msgs)
	for _, m := range msgs {
		if m.Data["id"] != m.ID || m.Data["sessionID"] != res.SessionID {
			t.Errorf("message %s body ids %v %v", m.ID, m.Data["id"], m.Data["sessionID"])
		}
		for _, p := range m.Parts {
			if p.Data["id"] != p.ID || p.Data["messageID"] != m.ID {
				t.Errorf("part %s body ids %v %v", p.ID, p.Data["id"], p.Data["messageID"])
			}
		}
	}
}

func TestResumeAndServe_1_18(t *testing.T) {
	t.Parallel()
	e := NewT(t, Options{Version: V1_18})
	ctx := testCtx(t)
	res, err := e.Prompt(ctx, "hello")
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("err=%v\n%s", err, res)
	}
	res2, err := e.Resume(ctx, res.SessionID, "and again")
	if err != nil || res2.ExitCode != 0 {
		t.Fatalf("err=%v\n%s", err, res2)
	}
	assertAllAccepted(t, e)
	chat := e.Mock.ChatRequests()
	last := chat[len(chat)-1].Parsed.Messages
	if len(last) != 3 || last[1].Content[0].Type != "thinking" {
		b, _ := json.Marshal(last)
		t.Errorf("resume history %s", b)
	}
	srv, err := e.Serve(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Kill()
	code, body, err := srv.SessionMessages(ctx, res.SessionID)
	if err != nil || code != 200 {
		t.Fatalf("GET messages: %d %v %s", code, err, body)
	}
	var got []struct {
		Info  map[string]any
		Parts []map[string]any
	}
	if err := json.Unmarshal(body, &got); err != nil || len(got) != 4 {
		t.Fatalf("messages: %v %.500s", err, body)
	}
}

// TestRecordedData checks that testdata/real opens with the store readers
// and that real OpenCode still reads it (export of every session): the
// Anthropic stores of both versions and the provider family stores of
// 1.18.33.
func TestRecordedData(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	stores := []struct {
		dir, version string
		sessions     int
		providers    []string // providers the assistant messages come from
	}{
		{"opencode-" + V1_18, V1_18, 3, []string{"anthropic"}},
		{"opencode-" + V1_1, V1_1, 3, []string{"anthropic"}},
		{"opencode-" + V1_18 + "-openai-compatible", V1_18, 6, []string{"deepseek", "moonshotai", "kimi"}},
		{"opencode-" + V1_18 + "-openai-responses", V1_18, 2, []string{"openai"}},
	}
	for _, st := range stores {
		t.Run(st.dir, func(t *testing.T) {
			t.Parallel()
			src := filepath.Join(root, "testdata", "real", st.dir)
			ids, err := Sessions(src)
			if err != nil || len(ids) != st.sessions {
				t.Fatalf("sessions %v %v", ids, err)
			}
			e := NewT(t, Options{Version: st.version})
			if err := e.LoadData(src); err != nil {
				t.Fatal(err)
			}
			ctx := testCtx(t)
			kinds := map[string]bool{}
			providers := map[string]bool{}
			for _, id := range ids {
				msgs, err := LoadSession(src, id)
				if err != nil {
					t.Fatal(err)
				}
				doc, res, err := e.Export(ctx, id)
				if err != nil {
					t.Fatalf("export %s: %v\n%s", id, err, res)
				}
				var exp struct{ Messages []json.RawMessage }
				if err := json.Unmarshal(doc, &exp); err != nil || len(exp.Messages) != len(msgs) {
					t.Errorf("export %s: %d messages, store has %d (%v)", id, len(exp.Messages), len(msgs), err)
				}
				users := 0
				for _, m := range msgs {
					if m.Role() == "user" {
						users++
						continue
					}
					p, _ := Get(m.Data, "providerID").(string)
					providers[p] = true
					for _, p := range m.Parts {
						kinds[p.Type()] = true
					}
					checkRecordedReasoning(t, m)
				}
				if users >= 2 {
					kinds["multi-turn"] = true
				}
			}
			for _, k := range []string{"step-start", "reasoning", "tool", "text", "step-finish", "multi-turn"} {
				if !kinds[k] {
					t.Errorf("recorded data has no %s", k)
				}
			}
			for _, p := range st.providers {
				if !providers[p] {
					t.Errorf("no assistant message from provider %s (have %v)", p, providers)
				}
			}
			if len(providers) != len(st.providers) {
				t.Errorf("assistant messages from %v, want %v", providers, st.providers)
			}
		})
	}
}

// checkRecordedReasoning checks that a recorded assistant message's
// reasoning carries what its provider issued: the mocks' signature or
// encrypted content, made with their default secrets for the harness's
// API keys, so resumed copies are accepted.
func checkRecordedReasoning(t *testing.T, m Message) {
	t.Helper()
	for _, p := range m.Parts {
		if p.Type() != "reasoning" {
			continue
		}
		switch provider, _ := Get(m.Data, "providerID").(string); provider {
		case "anthropic":
			sig, _ := Get(p.Data, "metadata.anthropic.signature").(string)
			if !mockanthropic.ValidSignature(mockanthropic.DefaultSecret, p.Text(), sig) {
				t.Errorf("reasoning %s: signature does not verify", p.ID)
			}
		case "openai":
			enc, _ := Get(p.Data, "metadata.openai.reasoningEncryptedContent").(string)
			model, _ := Get(m.Data, "modelID").(string)
			if !mockopenai.Verify(mockopenai.DefaultSecret, enc, Providers["openai"].APIKey, model) {
				t.Errorf("reasoning %s: encrypted content does not verify", p.ID)
			}
		default:
			if p.Data["metadata"] != nil {
				t.Errorf("reasoning %s of %s has metadata %v", p.ID, provider, p.Data["metadata"])
			}
		}
	}
}

// TestEnvLeavesNothingInTempDir runs OpenCode once in an Env of each
// version and closes it: nothing may be left in the temp directory. Each
// OpenCode start unpacks a native library of ~5 MB into $TMPDIR and never
// removes it (OBSERVED.md); before Env gave OpenCode a TMPDIR of its own, a
// run of the suite left thousands of them and filled the disk. Not
// parallel: it points the process's temp directory at a folder of its own.
func TestEnvLeavesNothingInTempDir(t *testing.T) {
	for _, version := range []string{V1_18, V1_1} {
		t.Run(version, func(t *testing.T) {
			if _, err := Install(version); err != nil {
				t.Fatal(err)
			}
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			e, err := New(Options{Version: version})
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.Prompt(testCtx(t), "hello")
			if err != nil || res.ExitCode != 0 {
				e.Close()
				t.Fatalf("err=%v\n%s", err, res)
			}
			unpacked, _ := os.ReadDir(e.TempDir)
			e.Close()
			left, err := os.ReadDir(tmp)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, d := range left {
				names = append(names, d.Name())
			}
			if len(names) > 0 {
				t.Errorf("the temp directory holds %v after the Env closed", names)
			}
			t.Logf("the run's own temp directory held %d entries", len(unpacked))
		})
	}
}
