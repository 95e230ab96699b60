package mockanthropic

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/mockstream"
)

func post(t *testing.T, s *Server, b string) (*http.Response, error) {
	t.Helper()
	return http.Post(s.BaseURL()+"/messages", "application/json", strings.NewReader(b))
}

type event struct {
	Name string
	Data map[string]any
}

func readEvents(t *testing.T, r io.Reader) []event {
	t.Helper()
	var out []event
	sc := bufio.NewScanner(r)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatal(err)
			}
			out = append(out, event{name, d})
		}
	}
	return out
}

const tools = `"tools":[{"name":"bash","input_schema":{"type":"object"}}],`

func TestStreamToolUse(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	resp, err := post(t, s, `{"model":"m","max_tokens":10,"stream":true,`+tools+thinkingOn+`"messages":[{"role":"user","content":"go [[tool:bash echo hi]]"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	evs := readEvents(t, resp.Body)
	var names []string
	var thinking, signature, input string
	for _, e := range evs {
		names = append(names, e.Name)
		if d, ok := e.Data["delta"].(map[string]any); ok {
			switch d["type"] {
			case "thinking_delta":
				thinking += d["thinking"].(string)
			case "signature_delta":
				signature = d["signature"].(string)
			case "input_json_delta":
				input += d["partial_json"].(string)
			}
		}
	}
	if names[0] != "message_start" || names[len(names)-1] != "message_stop" {
		t.Errorf("events %v", names)
	}
	if !ValidSignature(s.Secret(), thinking, signature) {
		t.Errorf("signature %q does not verify %q", signature, thinking)
	}
	var in map[string]string
	if err := json.Unmarshal([]byte(input), &in); err != nil || in["command"] != "echo hi" {
		t.Errorf("tool input %q: %v", input, err)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].Verdict != Accepted || !reqs[0].Chat {
		t.Fatalf("recorded %+v", reqs)
	}
	if got := reqs[0].Stages; got[len(got)-1] != StageDone {
		t.Errorf("stages %v", got)
	}
}

func TestRejectRecorded(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	resp, err := post(t, s, `{"model":"m","max_tokens":10,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":" "}]}]}`)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), `"type":"error"`) || !strings.Contains(string(b), TextWhitespaceTextBlock) ||
		resp.Header.Get("retry-after-ms") != mockstream.RetryAfterMS {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	r := s.Rejected()
	if len(r) != 1 || r[0].Error != TextWhitespaceTextBlock {
		t.Fatalf("rejected %+v", r)
	}
}

func TestPauseMidText(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	p := s.Pause(StageTextDelta, ChatRequest)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", s.BaseURL()+"/messages",
		strings.NewReader(`{"model":"m","max_tokens":10,"stream":true,`+tools+`"messages":[{"role":"user","content":"hello"}]}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-p.Reached():
		if r.Stages[len(r.Stages)-1] != StageTextDelta {
			t.Errorf("stages %v", r.Stages)
		}
	case <-ctx.Done():
		t.Fatal("pause not reached")
	}
	if _, err := s.WaitStage(ctx, StageTextDelta, s.NthChat(0)); err != nil {
		t.Fatal(err)
	}
	for _, st := range s.Requests()[0].Stages {
		if st == StageTextDone {
			t.Fatal("stream went on past the pause")
		}
	}
	p.Release()
	evs := readEvents(t, resp.Body)
	resp.Body.Close()
	if evs[len(evs)-1].Name != "message_stop" {
		t.Errorf("last event %v", evs[len(evs)-1])
	}
}

// A request body of exactly RequestBytesMax bytes is answered; one byte
// more is refused before anything else is checked, with the errors page's
// 413 and body, and recorded as a rejected chat request.
func TestRequestSizeLimit(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	// body builds a valid chat request of exactly n bytes, padding a text
	// block; bad makes it also break a rule the validator checks.
	body := func(n int, bad bool) string {
		text := "x"
		if bad {
			text = " "
		}
		head := `{"model":"m","max_tokens":10,"stream":false,` + tools + `"messages":[{"role":"user","content":[{"type":"text","text":"` + text
		tail := `"}]}]}`
		pad := " "
		if !bad {
			pad = "a"
		}
		return head + strings.Repeat(pad, n-len(head)-len(tail)) + tail
	}
	send := func(b string) (int, string) {
		t.Helper()
		resp, err := post(t, s, b)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(got)
	}
	if code, got := send(body(RequestBytesMax, false)); code != http.StatusOK {
		t.Fatalf("a request of exactly %d bytes: %d %.200s", RequestBytesMax, code, got)
	}
	const want = `{"error":{"message":"Request exceeds the maximum allowed number of bytes. The maximum request size is 32 MB for standard API endpoints.","type":"request_too_large"},"type":"error"}`
	for _, bad := range []bool{false, true} {
		code, got := send(body(RequestBytesMax+1, bad))
		if code != http.StatusRequestEntityTooLarge || got != want {
			t.Errorf("a request of %d bytes (also invalid: %v): %d %s", RequestBytesMax+1, bad, code, got)
		}
	}
	if code, got := send(body(1000, true)); code != http.StatusBadRequest || !strings.Contains(got, TextWhitespaceTextBlock) {
		t.Errorf("a small invalid request: %d %s", code, got)
	}
	r := s.Rejected()
	if len(r) != 3 || r[0].Error != TextRequestTooLarge || !r[0].Chat || r[0].Parsed == nil || len(r[0].Body) != RequestBytesMax+1 {
		t.Fatalf("rejected %d: %+v", len(r), r[0].Error)
	}
	// NoValidate answers every request.
	n := New(Config{NoValidate: true})
	defer n.Close()
	resp, err := post(t, n, body(RequestBytesMax+1, false))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("NoValidate: %d", resp.StatusCode)
	}
}

// A PDF the mock is told it cannot read is refused with the API's text,
// wherever it is sent; other PDFs are accepted.
func TestUnreadablePDF(t *testing.T) {
	checkMarked(t, (*Server).SetUnreadablePDF, func(text string) string {
		return `{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"` +
			base64.StdEncoding.EncodeToString([]byte("%PDF-1.4\n"+text+"\n%%EOF\n")) + `"}}`
	}, TextPDFUnprocessable)
}

// checkMarked sets the marker "unreadable-marker" with set and sends three
// requests holding block(text): an unmarked one in a user's message
// (accepted), the marked one there and in a tool result (refused with
// want, 400 invalid_request_error).
func checkMarked(t *testing.T, set func(*Server, []byte), block func(text string) string, want string) {
	t.Helper()
	s := New(Config{})
	defer s.Close()
	set(s, []byte("unreadable-marker"))
	for _, c := range []struct {
		name, block, want string
	}{
		{"unmarked", block("fine"), ""},
		{"marked", block("unreadable-marker"), want},
		{"marked, in a tool result", "", want},
	} {
		msgs := `[{"role":"user","content":[{"type":"text","text":"read"},` + c.block + `]}]`
		if c.block == "" {
			msgs = `[{"role":"user","content":"read it"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"bash","input":{}}]},` +
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"out"},` + block("unreadable-marker") + `]}]}]`
		}
		resp, err := post(t, s, `{"model":"m","max_tokens":10,`+tools+`"messages":`+msgs+`}`)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error struct{ Type, Message string }
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if body.Error.Message != c.want || c.want != "" && (resp.StatusCode != 400 || body.Error.Type != "invalid_request_error") {
			t.Errorf("%s: %d %+v, want %q", c.name, resp.StatusCode, body.Error, c.want)
		}
	}
}

// The image a test marks is refused with "Could not process image", in a
// user's message and in a tool result; an image without the marker is
// accepted.
func TestUnreadableImage(t *testing.T) {
	checkMarked(t, (*Server).SetUnreadableImage, func(text string) string {
		raw, _ := base64.StdEncoding.DecodeString(mockstream.TinyImage("image/png"))
		return `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` +
			base64.StdEncoding.EncodeToString(append(raw, text...)) + `"}}`
	}, TextImageUnprocessable)
}
