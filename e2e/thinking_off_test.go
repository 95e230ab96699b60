//go:build acceptance

package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
)

// TestThinkingOffToolLoopCut: OpenCode 1.18.33's default for
// claude-sonnet-4-5 is thinking off (OBSERVED.md). A tool loop SIGKILLed
// once its tool result is stored, with thinking off, is what SF152 finds
// with thinking on (the final tool-loop message has no thinking block),
// but with thinking off Anthropic takes it. The model's name says it
// thinks; the turn's first step, finished without reasoning, says it did
// not. So scan reports no SF152, fix makes no SF152 repair, and the resume
// is accepted by the strict mock. A real run, no edit.
func TestThinkingOffToolLoopCut(t *testing.T) {
	parallel(t)
	acquire(t)
	ctx := testCtx(t, 10*time.Minute)
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_18, ThinkingBudget: -1, Timeout: 3 * time.Minute})

	// Hold the follow-up request of the tool loop and kill OpenCode once
	// the tool result is stored, as the recorded base's cut session.
	pause := e.Mock.Pause(mockanthropic.StageReceived, func(r *mockanthropic.Request) bool {
		return r.Chat && len(r.Parsed.PendingToolResults()) > 0 && strings.Contains(r.Parsed.LastUserText(), markerCut)
	})
	defer pause.Release()
	proc, err := e.StartPrompt("", promptCut)
	if err != nil {
		t.Fatal(err)
	}
	var session string
	err = proc.KillAt(ctx, pause, func() bool {
		ids, _ := opencodetest.Sessions(e.DataDir())
		if len(ids) != 1 {
			return false
		}
		session = ids[0]
		msgs, err := opencodetest.LoadSession(e.DataDir(), session)
		if err != nil {
			return false
		}
		for _, m := range msgs {
			for _, p := range m.Parts {
				if p.Type() == "tool" && opencodetest.Get(p.Data, "state.status") == "completed" {
					return true
				}
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("killing the tool loop once its result is stored: %v", err)
	}
	pause.Release()

	// Thinking was off: no request asked for it, no reasoning was stored.
	for _, r := range e.Mock.ChatRequests() {
		if r.Parsed.ThinkingEnabled() {
			t.Fatalf("request %d asked for thinking; the case needs OpenCode's default, thinking off", r.Index)
		}
	}
	msgs, err := opencodetest.LoadSession(e.DataDir(), session)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Type() == "reasoning" {
				t.Fatalf("message %s holds a reasoning part with thinking off", m.ID)
			}
		}
	}

	found, _ := scanStore(t, e, session)
	if hasCode(found, "SF152", "") {
		t.Errorf("scan reports SF152 on a tool loop answered with thinking off\n%v", found)
	}
	fix := sessfix(t, e, "fix", "--yes", e.DataDir())
	if fix.ExitCode > 1 || strings.Contains(fix.Stdout+fix.Stderr, "SF152") {
		t.Errorf("fix --yes acted on SF152 with thinking off\n%s", fix)
	}
	if rej := resumeVerdict(ctx, t, e, anthropicCalls, session, "are you there?"); rej != "" {
		t.Fatalf("the resume is rejected: %s\nscan found %v\n%s", rej, found, fix)
	}
	t.Logf("scan found %v; fix:\n%s", codes(sortedCodes(found)), fix.Stderr)
	if slices.ContainsFunc(found, func(f finding) bool { return f.Severity == "error" }) {
		t.Errorf("scan reports an error on a session OpenCode resumes as it is: %v", found)
	}
}
