package mockgemini

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/mockstream"
)

func post(t *testing.T, s *Server, model, method, body string) *http.Response {
	t.Helper()
	url := s.BaseURL() + "/models/" + model + ":" + method
	if method == "streamGenerateContent" {
		url += "?alt=sse"
	}
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("x-goog-api-key", "k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

type chunkBody struct {
	Candidates []struct {
		Content      Content `json:"content"`
		FinishReason string  `json:"finishReason"`
	} `json:"candidates"`
	UsageMetadata map[string]int `json:"usageMetadata"`
}

func readChunks(t *testing.T, r io.Reader) []chunkBody {
	t.Helper()
	var out []chunkBody
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "data: ") {
			continue
		}
		var c chunkBody
		if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

const thinkingOn = `"generationConfig":{"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"high"}}`

func TestStreamFunctionCall(t *testing.T) {
	s := New(Config{APIKey: "k"})
	defer s.Close()
	body := `{"contents":[{"role":"user","parts":[{"text":"go [[tool:bash echo hi]] [[tool:bash echo ho]]"}]}],` +
		`"tools":[{"functionDeclarations":[{"name":"bash"}]}],` + thinkingOn + `}`
	resp := post(t, s, model3, "streamGenerateContent", body)
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	chunks := readChunks(t, resp.Body)
	var thoughts string
	var calls []Part
	for _, c := range chunks {
		for _, p := range c.Candidates[0].Content.Parts {
			if p.Thought {
				thoughts += *p.Text
			}
			if p.FunctionCall != nil {
				calls = append(calls, p)
			}
		}
	}
	last := chunks[len(chunks)-1]
	if last.Candidates[0].FinishReason != "STOP" || last.UsageMetadata["totalTokenCount"] == 0 {
		t.Errorf("last chunk %+v", last)
	}
	if !strings.Contains(thoughts, "bash tool") {
		t.Errorf("thoughts %q", thoughts)
	}
	if len(calls) != 2 || !ValidSignature(s.Secret(), model3, calls[0].ThoughtSignature) || calls[1].ThoughtSignature != "" {
		t.Fatalf("calls %+v", calls)
	}
	var args map[string]string
	if err := json.Unmarshal(calls[1].FunctionCall.Args, &args); err != nil || args["command"] != "echo ho" {
		t.Errorf("args %s: %v", calls[1].FunctionCall.Args, err)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].Verdict != Accepted || !reqs[0].Chat || reqs[0].Parsed.Model != model3 {
		t.Fatalf("recorded %+v", reqs)
	}
	if !reqs[0].Reached(StageFunctionCall) || !reqs[0].Reached(StageDone) {
		t.Errorf("stages %v", reqs[0].Stages)
	}

	// Answering the calls: the signed call is accepted, the answer's
	// signature rides on an empty text part at the end.
	body2 := `{"contents":[{"role":"user","parts":[{"text":"go"}]},` +
		`{"role":"model","parts":[{"functionCall":{"name":"bash","args":{}},"thoughtSignature":"` + calls[0].ThoughtSignature + `"},{"functionCall":{"name":"bash","args":{}}}]},` +
		`{"role":"user","parts":[` + fresp("bash") + `,` + fresp("bash") + `]}],"tools":[{"functionDeclarations":[{"name":"bash"}]}]}`
	resp2 := post(t, s, model3, "streamGenerateContent", body2)
	defer resp2.Body.Close()
	var textOut, sig string
	for _, c := range readChunks(t, resp2.Body) {
		for _, p := range c.Candidates[0].Content.Parts {
			if p.Text != nil && !p.Thought {
				textOut += *p.Text
				if p.ThoughtSignature != "" {
					sig = p.ThoughtSignature
				}
			}
		}
	}
	if !strings.Contains(textOut, "Its output was: ok") || !ValidSignature(s.Secret(), model3, sig) {
		t.Errorf("text %q sig %q", textOut, sig)
	}
}

func TestRejectShape(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	resp := post(t, s, model3, "streamGenerateContent", req(user(text("hi")), model(call("bash", "")), user(fresp("bash"))))
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var e struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Status  string `json:"status"`
		} `json:"error"`
	}
	if resp.StatusCode != 400 || resp.Header.Get("retry-after-ms") != mockstream.RetryAfterMS || json.Unmarshal(b, &e) != nil || e.Error.Code != 400 || e.Error.Status != "INVALID_ARGUMENT" ||
		e.Error.Message != MsgMissingSignature("bash", 2) {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if r := s.Rejected(); len(r) != 1 || r[0].Error != MsgMissingSignature("bash", 2) || !r[0].Reached(StageRejected) {
		t.Fatalf("rejected %+v", r)
	}
}

func TestAPIKeyAndRoute(t *testing.T) {
	s := New(Config{APIKey: "right"})
	defer s.Close()
	resp := post(t, s, model3, "streamGenerateContent", req(user(text("hi"))))
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), TextInvalidAPIKey) {
		t.Fatalf("wrong key: %d %s", resp.StatusCode, b)
	}
	resp = post(t, s, model3, "countTokens", req(user(text("hi"))))
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("unknown method: %d", resp.StatusCode)
	}
}

func TestGenerateContentJSON(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	resp := post(t, s, model3, "generateContent", `{"contents":[{"role":"user","parts":[{"text":"title please"}]}]}`)
	defer resp.Body.Close()
	var c chunkBody
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	parts := c.Candidates[0].Content.Parts
	if len(parts) != 2 || *parts[0].Text != "Mock session title" || !ValidSignature(s.Secret(), model3, parts[1].ThoughtSignature) {
		t.Fatalf("parts %+v", parts)
	}
}

func TestPauseMidThought(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	p := s.Pause(StageThoughtDelta, ChatRequest)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	body := `{"contents":[{"role":"user","parts":[{"text":"hello"}]}],"tools":[{"functionDeclarations":[{"name":"bash"}]}],` + thinkingOn + `}`
	hr, _ := http.NewRequestWithContext(ctx, "POST", s.BaseURL()+"/models/"+model3+":streamGenerateContent?alt=sse", strings.NewReader(body))
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Held():
	case <-ctx.Done():
		t.Fatal("pause not reached")
	}
	if r := s.Requests()[0]; r.Reached(StageThoughtDone) {
		t.Fatal("stream went on past the pause")
	}
	p.Release()
	chunks := readChunks(t, resp.Body)
	resp.Body.Close()
	if chunks[len(chunks)-1].Candidates[0].FinishReason != "STOP" {
		t.Errorf("stream did not finish after release")
	}
}

// A request over Config.MaxPromptTokens is refused with Gemini's 400
// INVALID_ARGUMENT "The input token count (N) exceeds the maximum number
// of tokens allowed (M)."; within the window it is answered.
func TestInputTokenCount(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	body := req(user(text(strings.Repeat("x", 400))))
	n := PromptTokens([]byte(body))
	s.SetMaxPromptTokens(n - 1)
	resp := post(t, s, model3, "streamGenerateContent", body)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := fmt.Sprintf("The input token count (%d) exceeds the maximum number of tokens allowed (%d).", n, n-1)
	if resp.StatusCode != 400 || string(b) != `{"error":{"code":400,"message":"`+want+`","status":"INVALID_ARGUMENT"}}` {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	s.SetMaxPromptTokens(n)
	resp = post(t, s, model3, "streamGenerateContent", body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("within the window: %d", resp.StatusCode)
	}
}

// The image a test marks is refused with "Unable to process input image.
// Please retry…", again on every retry; an unmarked image is accepted.
func TestUnreadableImage(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	s.SetUnreadableImage([]byte("unreadable-marker"))
	png := func(tail string) string {
		raw, _ := base64.StdEncoding.DecodeString(mockstream.TinyImage("image/png"))
		return inline("image/png", base64.StdEncoding.EncodeToString(append(raw, tail...)))
	}
	for _, c := range []struct {
		name, image string
		want        int
	}{
		{"an image", png(""), 200},
		{"the marked image", png("unreadable-marker"), 400},
		{"the marked image again", png("unreadable-marker"), 400},
	} {
		resp := post(t, s, model3, "streamGenerateContent", req(user(text("look"), c.image)))
		var body struct{ Error APIError }
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		_ = json.Unmarshal(b, &body)
		if resp.StatusCode != c.want || c.want == 400 && (body.Error.Message != TextUnableToProcessImage || body.Error.Status != "INVALID_ARGUMENT") {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, b)
		}
	}
}
