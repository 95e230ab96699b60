package e2e

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/mockopenai"
	"github.com/sessfix/sessfix/internal/opencodetest"
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
	// breakIt makes the broken session and returns its id and the user
	// texts OpenCode stored.
	breakIt func(ctx context.Context, t *testing.T, e *opencodetest.Env) (string, []string)
	code    string
}

// openAIResume resumes the session and returns the run's first rejected
// agent request's error text ("" when every agent request was accepted).
func openAIResume(ctx context.Context, t *testing.T, e *opencodetest.Env, session, prompt string) string {
	t.Helper()
	before := len(e.OpenAI.Requests())
	res, err := e.Resume(ctx, session, prompt)
	if err != nil {
		t.Fatal(err)
	}
	agent := 0
	for _, r := range e.OpenAI.Requests()[before:] {
		if !r.Chat {
			continue
		}
		agent++
		if r.Verdict == mockopenai.Rejected {
			return r.Error
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
	// The strictest reading of the thinking rule: every turn is checked.
	e.OpenAI.SetReasoningScope(mockopenai.ScopeAllTurns)
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
	got := openAIResume(ctx, t, e, session, prompt)
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
	if rej := openAIResume(ctx, t, e, session, next); rej != "" {
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
			before, _ := opencodetest.Sessions(e.DataDir())
			pause := e.OpenAI.Pause(mockopenai.StageReasoningDone, e.OpenAI.NthAgent(0))
			defer pause.Release()
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
					for _, p := range m.Parts {
						if enc, _ := opencodetest.Get(p.Data, "metadata.openai.reasoningEncryptedContent").(string); p.Type() == "reasoning" && enc != "" {
							return true
						}
					}
				}
				return false
			})
			if err != nil {
				t.Fatal(err)
			}
			return session, []string{"Please run a command for me"}
		},
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
