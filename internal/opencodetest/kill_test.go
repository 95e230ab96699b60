package opencodetest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/mockanthropic"
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

func hasPart(m Message, typ string) bool {
	for _, p := range m.Parts {
		if p.Type() == typ {
			return true
		}
	}
	return false
}

// killMidText starts a new session, holds the mock's stream right after the
// first text delta of the first chat request, waits until OpenCode has
// stored a text part, and SIGKILLs it. It returns the session id.
func killMidText(t *testing.T, e *Env) string {
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
		return ok && hasPart(m, "text")
	})
	if err != nil {
		t.Fatalf("kill after the first text delta: %v", err)
	}
	return session
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
	session := killMidText(t, e)
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
	var types []string
	for _, p := range m.Parts {
		types = append(types, p.Type())
		switch p.Type() {
		case "reasoning":
			sig, _ := Get(p.Data, "metadata.anthropic.signature").(string)
			if !mockanthropic.ValidSignature(e.Mock.Secret(), p.Text(), sig) {
				t.Errorf("reasoning not signed: %v", p.Data)
			}
		case "text":
			if p.Text() != "" {
				t.Errorf("text part %q, want \"\" (1.18.33 writes text when the block ends)", p.Text())
			}
		}
	}
	if fmt.Sprint(types) != "[step-start reasoning text]" {
		t.Errorf("parts %v", types)
	}

	// Resuming sends the empty text part as a whitespace-only block.
	ctx := testCtx(t)
	e.Mock.Reset()
	res, err := e.Resume(ctx, session, "are you there?")
	if err != nil {
		t.Fatal(err)
	}
	chat := e.Mock.ChatRequests()
	if len(chat) == 0 {
		t.Fatalf("resume sent nothing\n%s", res)
	}
	b, _ := json.Marshal(chat[0].Parsed.Messages)
	t.Logf("resume request messages: %s\nverdict %s %s\nexit %d", b, chat[0].Verdict, chat[0].Error, res.ExitCode)
	if chat[0].Verdict != mockanthropic.Rejected || chat[0].Error != mockanthropic.TextWhitespaceTextBlock {
		t.Errorf("resume verdict %s %q, want the whitespace-text rejection", chat[0].Verdict, chat[0].Error)
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
	session := killMidText(t, e)
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
	var types []string
	for _, p := range m.Parts {
		types = append(types, p.Type())
		if p.Type() == "text" && (p.Text() == "" || !strings.HasPrefix("Mock reply: I read your message", p.Text())) {
			t.Errorf("text part %q, want the partial text streamed so far", p.Text())
		}
		if p.Type() == "reasoning" && Get(p.Data, "metadata.anthropic.signature") == nil {
			t.Errorf("reasoning not signed: %v", p.Data)
		}
	}
	if fmt.Sprint(types) != "[step-start reasoning text]" {
		t.Errorf("parts %v", types)
	}
	ctx := testCtx(t)
	e.Mock.Reset()
	res, err := e.Resume(ctx, session, "are you there?")
	if err != nil {
		t.Fatal(err)
	}
	chat := e.Mock.ChatRequests()
	if len(chat) == 0 {
		t.Fatalf("resume sent nothing\n%s", res)
	}
	b, _ := json.Marshal(chat[0].Parsed.Messages)
	t.Logf("resume request messages: %s\nverdict %s %s\nexit %d", b, chat[0].Verdict, chat[0].Error, res.ExitCode)
	if chat[0].Verdict != mockanthropic.Accepted || res.ExitCode != 0 {
		t.Errorf("resume after a mid-text kill failed on 1.1.65: %s %s\n%s", chat[0].Verdict, chat[0].Error, res)
	}
}
