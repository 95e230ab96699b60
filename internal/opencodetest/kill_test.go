//go:build acceptance

package opencodetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
)

// lastAssistant loads the session and returns its last assistant message.
func lastAssistant(dataDir, session string) (Message, bool) {
	msgs, err := LoadSession(dataDir, session)
	if err != nil {
		return Message{}, false
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role() == "assistant" {
			return msgs[i], true
		}
	}
	return Message{}, false
}

// killMidText starts a new session, holds the mock's stream right after the
// first text delta of the first chat request, waits until OpenCode has
// stored a text part, and SIGKILLs it. It checks what both versions leave
// (an unfinished assistant message: step-start, signed reasoning, text) and
// returns the session id and that message.
func killMidText(t *testing.T, e *Env) (string, Message) {
	t.Helper()
	pause := e.Mock.Pause(mockanthropic.StageTextDelta, mockanthropic.ChatRequest)
	defer pause.Release()
	proc, err := e.StartPrompt("", "tell me something")
	if err != nil {
		t.Fatal(err)
	}
	var session string
	err = proc.KillAt(testCtx(t), pause, func() bool {
		ids, _ := Sessions(e.DataDir())
		if len(ids) != 1 {
			return false
		}
		session = ids[0]
		m, ok := lastAssistant(e.DataDir(), session)
		return ok && slices.Contains(partTypes(m), "text")
	})
	if err != nil {
		t.Fatalf("kill after the first text delta: %v", err)
	}
	m, ok := lastAssistant(e.DataDir(), session)
	if !ok {
		t.Fatal("no assistant message stored")
	}
	t.Logf("after SIGKILL mid-text:\n%s", dump(m))
	for _, k := range []string{"time.completed", "finish", "error"} {
		if Get(m.Data, k) != nil {
			t.Errorf("killed message has %s = %v", k, Get(m.Data, k))
		}
	}
	if got := partTypes(m); !slices.Equal(got, []string{"step-start", "reasoning", "text"}) {
		t.Errorf("parts %v", got)
	}
	for _, p := range m.Parts {
		if p.Type() != "reasoning" {
			continue
		}
		sig, _ := Get(p.Data, "metadata.anthropic.signature").(string)
		if !mockanthropic.ValidSignature(e.Mock.Secret(), p.Text(), sig) {
			t.Errorf("reasoning not signed: %v", p.Data)
		}
	}
	return session, m
}

// resumeKilled resumes a killed session with a fresh record in the mock and
// returns the result and the first chat request it sent.
func resumeKilled(t *testing.T, e *Env, session string) (*Result, mockanthropic.Request) {
	t.Helper()
	e.Mock.Reset()
	res, err := e.Resume(testCtx(t), session, "are you there?")
	if err != nil {
		t.Fatal(err)
	}
	chat := e.Mock.ChatRequests()
	if len(chat) == 0 {
		t.Fatalf("resume sent nothing\n%s", res)
	}
	b, _ := json.Marshal(chat[0].Parsed.Messages)
	t.Logf("resume request messages: %s\nverdict %s %s\nexit %d", b, chat[0].Verdict, chat[0].Error, res.ExitCode)
	return res, chat[0]
}

func dump(m Message) string {
	b, _ := json.Marshal(m.Data)
	s := fmt.Sprintf("message %s %s\n", m.ID, b)
	for _, p := range m.Parts {
		b, _ := json.Marshal(p.Data)
		s += fmt.Sprintf("  part %s %s\n", p.ID, b)
	}
	return s
}

func TestKillMidText_1_18(t *testing.T) {
	t.Parallel()
	e := NewT(t, Options{Version: V1_18})
	session, m := killMidText(t, e)
	for _, p := range m.Parts {
		if p.Type() == "text" && p.Text() != "" {
			t.Errorf("text part %q, want \"\" (1.18.33 writes text when the block ends)", p.Text())
		}
	}

	// Resuming sends the empty text part as a whitespace-only block.
	res, chat := resumeKilled(t, e, session)
	if chat.Verdict != mockanthropic.Rejected || chat.Error != mockanthropic.TextWhitespaceTextBlock {
		t.Errorf("resume verdict %s %q, want the whitespace-text rejection", chat.Verdict, chat.Error)
	}
	if res.ExitCode == 0 {
		t.Errorf("resume exited 0")
	}
	// The failed resume stores the provider's error on a new assistant message.
	failed, _ := lastAssistant(e.DataDir(), session)
	if Get(failed.Data, "error.name") != "APIError" || Get(failed.Data, "error.data.message") == nil {
		t.Errorf("failed resume message:\n%s", dump(failed))
	} else {
		t.Logf("stored error: %v", Get(failed.Data, "error.data.message"))
	}
}

func TestKillMidText_1_1(t *testing.T) {
	t.Parallel()
	e := NewT(t, Options{Version: V1_1})
	session, m := killMidText(t, e)
	for _, p := range m.Parts {
		if p.Type() == "text" && (p.Text() == "" || !strings.HasPrefix("Mock reply: I read your message", p.Text())) {
			t.Errorf("text part %q, want the partial text streamed so far", p.Text())
		}
	}
	res, chat := resumeKilled(t, e, session)
	if chat.Verdict != mockanthropic.Accepted || res.ExitCode != 0 {
		t.Errorf("resume after a mid-text kill failed on 1.1.65: %s %s\n%s", chat.Verdict, chat.Error, res)
	}
}
