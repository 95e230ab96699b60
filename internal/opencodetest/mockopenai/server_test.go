package mockopenai

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/mockstream"
)

func post(t *testing.T, s *Server, d Dialect, endpoint, key, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.BaseURL(d)+endpoint, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type event struct {
	Name string
	Data map[string]any
	Raw  string
}

func readEvents(t *testing.T, r io.Reader) []event {
	t.Helper()
	var out []event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			raw := strings.TrimPrefix(line, "data: ")
			e := event{Name: name, Raw: raw}
			if raw != "[DONE]" {
				if err := json.Unmarshal([]byte(raw), &e.Data); err != nil {
					t.Fatal(err)
				}
			}
			out = append(out, e)
			name = ""
		}
	}
	return out
}

const chatTools = `"tools":[{"type":"function","function":{"name":"bash","parameters":{"type":"object"}}}],`

func TestChatStreamToolCall(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	resp := post(t, s, DeepSeek, "/chat/completions", "sk-a",
		`{"model":"deepseek-reasoner","stream":true,"stream_options":{"include_usage":true},`+chatTools+`"messages":[{"role":"user","content":"go [[tool:bash echo hi]]"}]}`)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	evs := readEvents(t, resp.Body)
	var reasoning, args, finish, id string
	for _, e := range evs {
		if e.Raw == "[DONE]" {
			continue
		}
		for _, c := range e.Data["choices"].([]any) {
			ch := c.(map[string]any)
			d := ch["delta"].(map[string]any)
			if s, ok := d["reasoning_content"].(string); ok {
				reasoning += s
			}
			if f, ok := ch["finish_reason"].(string); ok {
				finish = f
			}
			for _, tc := range asSlice(d["tool_calls"]) {
				m := tc.(map[string]any)
				if v, ok := m["id"].(string); ok {
					id = v
				}
				args += m["function"].(map[string]any)["arguments"].(string)
			}
		}
	}
	if evs[len(evs)-1].Raw != "[DONE]" || evs[len(evs)-2].Data["usage"] == nil {
		t.Errorf("stream does not end with usage and [DONE]: %v", evs[len(evs)-2:])
	}
	if reasoning == "" || finish != "tool_calls" || !strings.HasPrefix(id, "call_") {
		t.Errorf("reasoning %q finish %q id %q", reasoning, finish, id)
	}
	var in map[string]string
	if err := json.Unmarshal([]byte(args), &in); err != nil || in["command"] != "echo hi" {
		t.Errorf("arguments %q", args)
	}
	reqs := s.Requests()
	if p := reqs[0].Parsed; len(reqs) != 1 || reqs[0].Verdict != Accepted || !reqs[0].Chat || !p.Thinking || p.Account != "sk-a" ||
		p.Dialect != DeepSeek || p.API != ChatCompletions {
		t.Errorf("recorded %+v", reqs)
	}
	if st := reqs[0].Stages; st[0] != StageReceived || st[len(st)-1] != StageDone {
		t.Errorf("stages %v", st)
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func TestChatRejects(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	body := `{"model":"kimi-k2.6","stream":true,` + chatTools + `"messages":[{"role":"user","content":"x"},` +
		`{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"bash","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"call_1","content":"ok"}]}`
	resp := post(t, s, Moonshot, "/chat/completions", "sk-a", body)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || resp.Header.Get("retry-after-ms") != mockstream.RetryAfterMS ||
		string(b) != `{"error":{"message":"`+MsgKimiMissing(1)+`","type":"invalid_request_error"}}` {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
	if r := s.Rejected(); len(r) != 1 || r[0].Error != MsgKimiMissing(1) || r[0].Turn.Status != 400 {
		t.Errorf("rejected %+v", r)
	}
	if resp := post(t, s, Moonshot, "/chat/completions", "", body); resp.StatusCode != 401 {
		t.Errorf("no key: %d", resp.StatusCode)
	}
	if resp := post(t, s, Moonshot, "/responses", "sk-a", body); resp.StatusCode != 404 {
		t.Errorf("Moonshot has no Responses API: %d", resp.StatusCode)
	}
}

const respTools = `"tools":[{"type":"function","name":"bash","parameters":{"type":"object"}}],`

func respRequest(store bool, input ...string) string {
	st := "false"
	if store {
		st = "true"
	}
	return `{"model":"gpt-5.2","stream":true,"store":` + st + `,"include":["reasoning.encrypted_content"],"reasoning":{"effort":"medium","summary":"auto"},` +
		respTools + `"input":[` + strings.Join(input, ",") + `]}`
}

func TestResponsesStream(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	resp := post(t, s, OpenAI, "/responses", "sk-a", respRequest(false, `{"role":"user","content":[{"type":"input_text","text":"go [[tool:bash echo hi]]"}]}`))
	evs := readEvents(t, resp.Body)
	var names []string
	var done []map[string]any
	for i, e := range evs {
		names = append(names, e.Name)
		if e.Data["type"] != e.Name || e.Data["sequence_number"] != float64(i) {
			t.Errorf("event %d: %s %v", i, e.Name, e.Data)
		}
		if e.Name == "response.output_item.done" {
			done = append(done, e.Data["item"].(map[string]any))
		}
	}
	if names[0] != "response.created" || names[len(names)-1] != "response.completed" {
		t.Errorf("events %v", names)
	}
	if len(done) != 2 || done[0]["type"] != "reasoning" || done[1]["type"] != "function_call" {
		t.Fatalf("items %v", done)
	}
	rs, fc := done[0], done[1]
	if !strings.HasPrefix(rs["id"].(string), "rs_") || !strings.HasPrefix(fc["id"].(string), "fc_") || !strings.HasPrefix(fc["call_id"].(string), "call_") {
		t.Errorf("ids %v %v", rs["id"], fc["id"])
	}
	if !Verify(s.Secret(), rs["encrypted_content"].(string), "sk-a", "gpt-5.2") {
		t.Errorf("encrypted content %v", rs["encrypted_content"])
	}
	r := s.Requests()[0]
	if out := r.Turn.Output; len(out) != 2 || out[1].Reasoning != rs["id"] || out[0].Stored {
		t.Errorf("output %+v", out)
	}
	if st := r.Stages; st[0] != StageReceived || st[len(st)-1] != StageDone {
		t.Errorf("stages %v", st)
	}
}

// TestResponsesStore checks item references against what the server
// stored: items of a store:true response can be referenced by the same
// account, items of a store:false response cannot.
func TestResponsesStore(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	user := `{"role":"user","content":[{"type":"input_text","text":"hello"}]}`
	for _, store := range []bool{true, false} {
		resp := post(t, s, OpenAI, "/responses", "sk-a", respRequest(store, user))
		io.Copy(io.Discard, resp.Body)
	}
	reqs := s.Requests()
	stored, unstored := reqs[0].Turn.Output, reqs[1].Turn.Output
	ref := func(id string) string { return `{"type":"item_reference","id":"` + id + `"}` }
	cases := []struct {
		key, body string
		status    int
	}{
		{"sk-a", respRequest(true, user, ref(stored[0].ID), ref(stored[1].ID), user), 200},
		{"sk-b", respRequest(true, user, ref(stored[0].ID), ref(stored[1].ID), user), 404},
		{"sk-a", respRequest(true, user, ref(unstored[0].ID), ref(unstored[1].ID), user), 404},
		{"sk-a", respRequest(true, user, ref(stored[1].ID), user), 400},
	}
	for i, c := range cases {
		resp := post(t, s, OpenAI, "/responses", c.key, c.body)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != c.status {
			t.Errorf("case %d: %d %s", i, resp.StatusCode, b)
		}
	}
	if r := s.Requests()[3]; r.Error != MsgItemNotFound(stored[0].ID) {
		t.Errorf("other account: %q", r.Error)
	}
}

func TestPause(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	p := s.Pause(StageTextDelta, AgentRequest)
	done := make(chan []event)
	go func() {
		resp := post(t, s, DeepSeek, "/chat/completions", "sk-a",
			`{"model":"deepseek-reasoner","stream":true,`+chatTools+`"messages":[{"role":"user","content":"hello"}]}`)
		done <- readEvents(t, resp.Body)
	}()
	select {
	case <-p.Held():
	case <-time.After(10 * time.Second):
		t.Fatal("never held")
	}
	r := <-p.Reached()
	if r.Stages[len(r.Stages)-1] != StageTextDelta {
		t.Errorf("stages %v", r.Stages)
	}
	select {
	case <-done:
		t.Fatal("stream finished while held")
	case <-time.After(200 * time.Millisecond):
	}
	p.Release()
	if evs := <-done; evs[len(evs)-1].Raw != "[DONE]" {
		t.Errorf("stream after release: %v", evs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.WaitStage(ctx, StageDone, s.NthAgent(0)); err != nil {
		t.Error(err)
	}
}

// TestSetReading: the server applies the reading it was given, from the
// next request on.
func TestSetReading(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	if r := s.Reading(); r != ReadingLenient {
		t.Fatalf("default reading %+v, want the lenient one", r)
	}
	// An earlier turn's tool call sent with reasoning_content "".
	body := `{"model":"deepseek-reasoner","stream":true,` + chatTools + `"messages":[{"role":"user","content":"x"},` +
		`{"role":"assistant","content":"","reasoning_content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"bash","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"call_1","content":"ok"},{"role":"assistant","content":"done"},{"role":"user","content":"more"}]}`
	if resp := post(t, s, DeepSeek, "/chat/completions", "sk-a", body); resp.StatusCode != 200 {
		t.Errorf("lenient reading: %d", resp.StatusCode)
	}
	s.SetReading(ReadingStrict)
	resp := post(t, s, DeepSeek, "/chat/completions", "sk-a", body)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(b), MsgDeepSeekMissing(1)) {
		t.Errorf("strict reading: %d %s", resp.StatusCode, b)
	}
	s.SetReading(ReadingLenient)
	if resp := post(t, s, DeepSeek, "/chat/completions", "sk-a", body); resp.StatusCode != 200 {
		t.Errorf("back to the lenient reading: %d", resp.StatusCode)
	}
}

// A request over Config.MaxPromptTokens is refused with OpenAI's
// context_length_exceeded: on Chat Completions a 400 with the text that
// prints the window and the request's count; on a streamed Responses
// request an error event after response.created and response.in_progress,
// the body OpenCode stores; a request within the window is answered.
func TestContextLengthExceeded(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	chat := `{"model":"gpt-4.1","stream":true,` + chatTools + `"messages":[{"role":"user","content":"` + strings.Repeat("x", 400) + `"}]}`
	s.SetMaxPromptTokens(PromptTokens([]byte(chat)) - 1)
	resp := post(t, s, OpenAI, "/chat/completions", "sk-a", chat)
	b, _ := io.ReadAll(resp.Body)
	want := MsgContextLength(PromptTokens([]byte(chat))-1, PromptTokens([]byte(chat)))
	if resp.StatusCode != 400 || string(b) != `{"error":{"code":"context_length_exceeded","message":"`+want+`","param":"messages","type":"invalid_request_error"}}` {
		t.Errorf("chat: %d %s", resp.StatusCode, b)
	}

	body := respRequest(false, `{"role":"user","content":[{"type":"input_text","text":"`+strings.Repeat("x", 400)+`"}]}`)
	s.SetMaxPromptTokens(PromptTokens([]byte(body)) - 1)
	resp = post(t, s, OpenAI, "/responses", "sk-a", body)
	evs := readEvents(t, resp.Body)
	if resp.StatusCode != 200 || len(evs) != 3 || evs[0].Name != "response.created" || evs[1].Name != "response.in_progress" || evs[2].Name != "error" ||
		evs[2].Raw != `{"error":{"code":"context_length_exceeded","message":"`+TextContextWindow+`","param":"input","type":"invalid_request_error"},"sequence_number":2,"type":"error"}` {
		t.Errorf("responses: %d %+v", resp.StatusCode, evs)
	}
	if r := s.Rejected(); len(r) != 2 || r[0].Error != want || r[1].Error != TextContextWindow || !r[1].Reached(StageRejected) {
		t.Errorf("rejected %+v", r)
	}

	s.SetMaxPromptTokens(PromptTokens([]byte(body)))
	resp = post(t, s, OpenAI, "/responses", "sk-a", body)
	if evs := readEvents(t, resp.Body); evs[len(evs)-1].Name != "response.completed" {
		t.Errorf("within the window: %+v", evs)
	}
}

// A body over Config.MaxRequestBytes is answered by the edge: HTTP 413,
// its HTML page, before the API reads it (Chat Completions and the
// Responses API); a body of exactly the limit is answered.
func TestEdgeRequestTooLarge(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	body := respRequest(false, `{"role":"user","content":[{"type":"input_text","text":"`+strings.Repeat("x", 400)+`"}]}`)
	chat := `{"model":"gpt-4.1","stream":true,` + chatTools + `"messages":[{"role":"user","content":"` + strings.Repeat("x", 400) + `"}]}`
	for _, c := range []struct{ path, body string }{{"/responses", body}, {"/chat/completions", chat}} {
		s.SetMaxRequestBytes(len(c.body) - 1)
		resp := post(t, s, OpenAI, c.path, "sk-a", c.body)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 413 || string(b) != EdgeTooLargePage || resp.Header.Get("Content-Type") != "text/html" {
			t.Errorf("%s over the limit: %d %q %s", c.path, resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
		s.SetMaxRequestBytes(len(c.body))
		resp = post(t, s, OpenAI, c.path, "sk-a", c.body)
		_, _ = io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Errorf("%s at the limit: %d", c.path, resp.StatusCode)
		}
	}
	if r := s.Rejected(); len(r) != 2 || !strings.HasPrefix(r[0].Error, "413 Request Entity Too Large") {
		t.Errorf("rejected %+v", r)
	}
}

// A Chat Completions request over MaxChatImages (counting the images of
// every message, the user message OpenCode adds after tool results among
// them) is refused with vLLM's text; one at the limit is answered.
func TestChatImageCount(t *testing.T) {
	s := New(Config{MaxChatImages: 2})
	defer s.Close()
	img := `{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg=="}}`
	body := func(n int) string {
		parts := []string{`{"type":"text","text":"Attached media from tool result:"}`}
		for range n {
			parts = append(parts, img)
		}
		return `{"model":"qwen2.5-vl-7b-instruct","stream":true,` + chatTools + `"messages":[{"role":"user","content":"look"},` +
			`{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"bash","arguments":"{}"}}]},` +
			`{"role":"tool","tool_call_id":"call_1","content":"Image read successfully"},` +
			`{"role":"user","content":[` + strings.Join(parts, ",") + `]}]}`
	}
	if resp := post(t, s, OpenAI, "/chat/completions", "sk-a", body(2)); resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("two images: %d %s", resp.StatusCode, b)
	}
	resp := post(t, s, OpenAI, "/chat/completions", "sk-a", body(3))
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(b), MsgTooManyImagesVLLM(2)) {
		t.Errorf("three images: %d %s", resp.StatusCode, b)
	}
}
