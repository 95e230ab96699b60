//go:build acceptance

package e2e

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockbedrock"
	"github.com/sessfix/sessfix/internal/opencodetest/mockopenai"
	"github.com/sessfix/sessfix/internal/opencodetest/mockstream"
)

// The static half of the provider families' proof: a session real OpenCode
// 1.18.33 broke the way users report, which `sessfix scan` predicts before
// any resume (the preflight's rule, with the provider's exact text), the
// strict mock then rejects with that same text, `sessfix fix --yes` (no
// other hint) repairs, and the next resume is accepted, with every user text
// still in `opencode export`. The breaks and repairs are the ones the lab
// proved (internal/opencodetest/OBSERVED.md, "Breaks, rejections and
// repairs"; TestProviderBreaks).

// staticCase is one break of a provider family.
type staticCase struct {
	model string
	// calls lists the agent requests the family's mock answered
	// (openAICalls unless set).
	calls func(e *opencodetest.Env) []mockCall
	// breakIt makes the broken session and returns its id and the user
	// texts OpenCode stored.
	breakIt func(ctx context.Context, t *testing.T, e *opencodetest.Env) (string, []string)
	code    string
}

// mockCall is one agent request a mock answered.
type mockCall struct {
	rejected bool
	err      string
}

// agentCalls are a mock's agent requests as mockCalls.
func agentCalls[P, A any](rs []mockstream.Call[P, A]) []mockCall {
	var out []mockCall
	for _, r := range rs {
		if r.Chat {
			out = append(out, mockCall{r.Verdict == mockstream.VerdictRejected, r.Error})
		}
	}
	return out
}

func openAICalls(e *opencodetest.Env) []mockCall  { return agentCalls(e.OpenAI.Requests()) }
func bedrockCalls(e *opencodetest.Env) []mockCall { return agentCalls(e.Bedrock.Requests()) }

// resumeVerdict resumes the session and returns the run's first rejected
// agent request's error text ("" when every agent request was accepted).
func resumeVerdict(ctx context.Context, t *testing.T, e *opencodetest.Env, calls func(*opencodetest.Env) []mockCall, session, prompt string) string {
	t.Helper()
	before := len(calls(e))
	res, err := e.Resume(ctx, session, prompt)
	if err != nil {
		t.Fatal(err)
	}
	agent := 0
	for _, c := range calls(e)[before:] {
		agent++
		if c.rejected {
			return c.err
		}
	}
	if res.ExitCode != 0 || agent == 0 {
		t.Fatalf("resume failed without a rejection (exit %d, %d agent requests)\n%s", res.ExitCode, agent, res)
	}
	return ""
}

func runStaticCase(t *testing.T, c staticCase) {
	acquire(t)
	ctx := testCtx(t, 15*time.Minute)
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_18, Model: c.model, Timeout: 4 * time.Minute})
	if c.calls == nil {
		c.calls = openAICalls
		// The strictest reading of the thinking rule: every turn is checked.
		e.OpenAI.SetReading(mockopenai.ReadingStrict)
	}
	session, texts := c.breakIt(ctx, t, e)

	fs, res := scanStore(t, e, session)
	var predicted *finding
	for i := range fs {
		if fs[i].Code == c.code {
			predicted = &fs[i]
			break
		}
	}
	if predicted == nil {
		t.Fatalf("scan does not report %s\n%s", c.code, res)
	}

	const prompt = "Are you still there?"
	got := resumeVerdict(ctx, t, e, c.calls, session, prompt)
	if got == "" {
		t.Fatalf("the broken session was accepted; %s predicted %q", c.code, predicted.ProviderError)
	}
	if got != predicted.ProviderError {
		t.Errorf("mock rejected with\n  %q\n%s predicted\n  %q", got, c.code, predicted.ProviderError)
	}
	texts = append(texts, prompt)

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
	const next = "One more thing, please."
	if rej := resumeVerdict(ctx, t, e, c.calls, session, next); rej != "" {
		t.Fatalf("after sessfix fix the resume is rejected: %s\n%s", rej, fix)
	}
	texts = append(texts, next)
	doc, exp, err := e.Export(ctx, session)
	if err != nil || exp.ExitCode != 0 {
		t.Fatalf("opencode export: %v\n%s", err, exp)
	}
	for _, s := range texts {
		if !bytes.Contains(doc, []byte(strings.TrimSpace(s))) {
			t.Errorf("export lost the user text %q", s)
		}
	}
}

// TestStaticKimiToolStepWithoutReasoning: a custom provider's Kimi K2
// Thinking (not interleaved in OpenCode's model data) answers a tool call
// without reasoning; OpenCode sends that step without reasoning_content
// from then on (SF163, excludeMessage).
func TestStaticKimiToolStepWithoutReasoning(t *testing.T) {
	t.Parallel()
	runStaticCase(t, staticCase{
		model: opencodetest.KimiCustomModel, code: "SF163",
		breakIt: func(ctx context.Context, t *testing.T, e *opencodetest.Env) (string, []string) {
			prompt := "Quick one " + mockopenai.MarkerNoReasoning + " [[tool:bash echo hi]]"
			res, err := e.Prompt(ctx, prompt)
			if err != nil {
				t.Fatal(err)
			}
			if res.SessionID == "" {
				t.Fatalf("no session\n%s", res)
			}
			return res.SessionID, []string{"Quick one"}
		},
	})
}

// TestStaticOpenAIKillAfterReasoning: OpenCode is killed after the
// Responses API's reasoning item was done, before the function call; the
// replayed reasoning item has nothing after it (SF164,
// dropEncryptedReasoning).
func TestStaticOpenAIKillAfterReasoning(t *testing.T) {
	t.Parallel()
	const prompt = "Please run a command for me [[tool:bash echo hello again]]"
	runStaticCase(t, staticCase{
		model: opencodetest.OpenAIModel, code: "SF164",
		breakIt: func(ctx context.Context, t *testing.T, e *opencodetest.Env) (string, []string) {
			pause := e.OpenAI.Pause(mockopenai.StageReasoningDone, e.OpenAI.NthAgent(0))
			return killWhen(ctx, t, e, pause, prompt, "reasoning", "metadata.openai.reasoningEncryptedContent"),
				[]string{"Please run a command for me"}
		},
	})
}

// TestStaticBedrockBlankText: Claude on Bedrock answers reasoning, a
// whitespace-only text and a tool call; the SDK keeps blank text next to
// signed reasoning, which Converse rejects (SF160, replaceEmptyTextParts).
func TestStaticBedrockBlankText(t *testing.T) {
	t.Parallel()
	runStaticCase(t, staticCase{
		model: opencodetest.BedrockModel, code: "SF160", calls: bedrockCalls,
		breakIt: func(ctx context.Context, t *testing.T, e *opencodetest.Env) (string, []string) {
			e.Bedrock.SetScript(mockbedrock.BlankTextScript)
			res, err := e.Prompt(ctx, "please run it")
			if err != nil {
				t.Fatal(err)
			}
			if res.SessionID == "" {
				t.Fatalf("no session\n%s", res)
			}
			return res.SessionID, []string{"please run it"}
		},
	})
}

// TestStaticBedrockKillMidText: OpenCode is killed after the first text
// delta; the stored text is "" and dropped, so the turn ends with its
// thinking (SF155).
func TestStaticBedrockKillMidText(t *testing.T) {
	t.Parallel()
	runStaticCase(t, staticCase{
		model: opencodetest.BedrockModel, code: "SF155", calls: bedrockCalls,
		breakIt: func(ctx context.Context, t *testing.T, e *opencodetest.Env) (string, []string) {
			return killWhen(ctx, t, e, e.Bedrock.Pause(mockbedrock.StageTextDelta, mockbedrock.ChatRequest), "tell me something", "text", ""),
				[]string{"tell me something"}
		},
	})
}

// killWhen starts a new session with prompt, and kills OpenCode once the
// mock holds its stream at pause and OpenCode stored an assistant part of
// type typ (with a non-empty string at key, when key is not "").
func killWhen(ctx context.Context, t *testing.T, e *opencodetest.Env, pause interface {
	opencodetest.Hold
	Release()
}, prompt, typ, key string) string {
	t.Helper()
	defer pause.Release()
	before, _ := opencodetest.Sessions(e.DataDir())
	proc, err := e.StartPrompt("", prompt)
	if err != nil {
		t.Fatal(err)
	}
	session := ""
	err = proc.KillAt(ctx, pause, func() bool {
		ids, _ := opencodetest.Sessions(e.DataDir())
		for _, id := range ids {
			if !contains(before, id) {
				session = id
			}
		}
		if session == "" {
			return false
		}
		ms, err := opencodetest.LoadSession(e.DataDir(), session)
		if err != nil {
			return false
		}
		for _, m := range ms {
			if m.Role() != "assistant" {
				continue
			}
			for _, p := range m.Parts {
				if p.Type() != typ {
					continue
				}
				if key == "" {
					return true
				}
				if v, _ := opencodetest.Get(p.Data, key).(string); v != "" {
					return true
				}
			}
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	return session
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
