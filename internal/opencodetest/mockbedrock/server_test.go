package mockbedrock

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/sessfix/sessfix/internal/opencodetest/mockstream"
)

func post(t *testing.T, ctx context.Context, s *Server, op, auth, b string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", s.URL()+"/model/"+url.PathEscape(claude)+"/"+op, strings.NewReader(b))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

type event struct {
	Type    string
	Payload map[string]any
}

// readEvents decodes an AWS event stream, checking every frame's CRCs.
func readEvents(t *testing.T, r io.Reader) []event {
	t.Helper()
	dec := eventstream.NewDecoder()
	var out []event
	for {
		msg, err := dec.Decode(r, nil)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("decode after %d events: %v", len(out), err)
		}
		if mt := msg.Headers.Get(":message-type"); mt == nil || mt.String() != "event" {
			t.Fatalf("message type %v", mt)
		}
		var p map[string]any
		if err := json.Unmarshal(msg.Payload, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, event{msg.Headers.Get(":event-type").String(), p})
	}
}

func TestStreamToolUse(t *testing.T) {
	s := New(Config{BearerToken: "tok"})
	defer s.Close()
	resp := post(t, context.Background(), s, "converse-stream", "Bearer tok",
		`{`+thinkOn+toolsDecl+`"messages":[{"role":"user","content":[{"text":"go [[tool:bash echo hi]]"}]}]}`)
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/vnd.amazon.eventstream" {
		t.Fatalf("content type %q", ct)
	}
	evs := readEvents(t, resp.Body)
	var names []string
	var reasoning, signature, input, toolID string
	for _, e := range evs {
		names = append(names, e.Type)
		if st, ok := e.Payload["start"].(map[string]any); ok {
			toolID = st["toolUse"].(map[string]any)["toolUseId"].(string)
		}
		d, _ := e.Payload["delta"].(map[string]any)
		if rc, ok := d["reasoningContent"].(map[string]any); ok {
			if v, ok := rc["text"].(string); ok {
				reasoning += v
			}
			if v, ok := rc["signature"].(string); ok {
				signature = v
			}
		}
		if tu, ok := d["toolUse"].(map[string]any); ok {
			input += tu["input"].(string)
		}
	}
	if names[0] != "messageStart" || names[len(names)-2] != "messageStop" || names[len(names)-1] != "metadata" {
		t.Errorf("events %v", names)
	}
	if !ValidSignature(s.Secret(), reasoning, signature) {
		t.Errorf("signature %q does not verify %q", signature, reasoning)
	}
	var in map[string]string
	if err := json.Unmarshal([]byte(input), &in); err != nil || in["command"] != "echo hi" || !strings.HasPrefix(toolID, "tooluse_") {
		t.Errorf("tool %s input %q: %v", toolID, input, err)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].Verdict != Accepted || !reqs[0].Chat || reqs[0].Parsed.ModelID != claude || !reqs[0].Reached(StageDone) {
		t.Fatalf("recorded %+v", reqs)
	}
}

func TestRejectShape(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	resp := post(t, context.Background(), s, "converse-stream", "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/bedrock/aws4_request, SignedHeaders=host, Signature=x",
		body(false, msg("user", text("hi")), msg("assistant", text(" ")), msg("user", text("again"))))
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || resp.Header.Get("x-amzn-ErrorType") != invalid("").Header() || resp.Header.Get("retry-after-ms") != mockstream.RetryAfterMS || string(b) != `{"message":"`+MsgBlankText(1, 0)+`"}` {
		t.Fatalf("%d %v %s", resp.StatusCode, resp.Header, b)
	}
	if r := s.Rejected(); len(r) != 1 || r[0].Error != MsgBlankText(1, 0) {
		t.Fatalf("rejected %+v", r)
	}
}

func TestAuth(t *testing.T) {
	s := New(Config{BearerToken: "tok", AccessKeyID: "AKID"})
	defer s.Close()
	for auth, want := range map[string]int{
		"":            403,
		"Bearer nope": 403,
		"Bearer tok":  200,
		"AWS4-HMAC-SHA256 Credential=OTHER/20260101/us-east-1/bedrock/aws4_request": 403,
		"AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/bedrock/aws4_request":  200,
	} {
		resp := post(t, context.Background(), s, "converse", auth, body(false, msg("user", text("hi"))))
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%q: %d, want %d", auth, resp.StatusCode, want)
		}
	}
}

func TestConverseJSON(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	resp := post(t, context.Background(), s, "converse", "Bearer x", `{`+thinkOn+`"messages":[{"role":"user","content":[{"text":"title"}]}]}`)
	defer resp.Body.Close()
	var out struct {
		Output struct {
			Message Message `json:"message"`
		} `json:"output"`
		StopReason string `json:"stopReason"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	c := out.Output.Message.Content
	if len(c) != 2 || c[0].ReasoningContent == nil || *c[1].Text != "Mock session title" || out.StopReason != "end_turn" {
		t.Fatalf("%+v", out)
	}
}

func TestPauseMidReasoning(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	p := s.Pause(StageReasoningDelta, ChatRequest)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp := post(t, ctx, s, "converse-stream", "Bearer x", `{`+thinkOn+toolsDecl+`"messages":[{"role":"user","content":[{"text":"hello"}]}]}`)
	select {
	case <-p.Held():
	case <-ctx.Done():
		t.Fatal("pause not reached")
	}
	if s.Requests()[0].Reached(StageReasoningDone) {
		t.Fatal("stream went on past the pause")
	}
	p.Release()
	evs := readEvents(t, resp.Body)
	resp.Body.Close()
	if evs[len(evs)-1].Type != "metadata" {
		t.Errorf("last event %v", evs[len(evs)-1])
	}
}
