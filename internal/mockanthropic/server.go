package mockanthropic

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Stage is a point in the life of one request's answer.
type Stage string

// Stages, in the order a stream passes them. A stage is reached after the
// events that make it up have been written and flushed to the client.
const (
	StageReceived      Stage = "received"       // request decoded and validated
	StageRejected      Stage = "rejected"       // error answer sent
	StageMessageStart  Stage = "message_start"  // message_start sent
	StageThinkingDelta Stage = "thinking_delta" // first thinking_delta sent (mid-thinking, no signature yet)
	StageThinkingDone  Stage = "thinking_done"  // signature_delta and content_block_stop of a thinking block sent
	StageTextStart     Stage = "text_start"     // content_block_start of a text block sent, no text yet
	StageTextDelta     Stage = "text_delta"     // first text_delta sent (mid-text)
	StageTextDone      Stage = "text_done"      // content_block_stop of a text block sent
	StageToolUse       Stage = "tool_use"       // a whole tool_use block sent
	StageMessageDelta  Stage = "message_delta"  // message_delta (stop_reason) sent, message_stop not yet
	StageDone          Stage = "done"           // message_stop sent
)

// Verdict says whether a request was accepted.
type Verdict string

// Verdicts.
const (
	Accepted Verdict = "accepted"
	Rejected Verdict = "rejected"
)

// Request is one recorded request.
type Request struct {
	Index  int // 0-based, in arrival order
	Method string
	Path   string
	Header http.Header
	Body   []byte
	Parsed *MessagesRequest
	// Chat is true for agent requests (they carry tools); OpenCode's title
	// and summary requests have none.
	Chat    bool
	Verdict Verdict
	// Error is the error message of a rejected request.
	Error string
	// Turn is what was answered to an accepted request.
	Turn Turn
	// Stages lists the stages reached so far.
	Stages []Stage
}

// Config configures a Server. The zero value works.
type Config struct {
	// Secret signs thinking blocks (DefaultSecret when nil).
	Secret []byte
	// Script chooses answers (DefaultScript when nil).
	Script Script
	// EventDelay is slept between SSE events.
	EventDelay time.Duration
	// NoValidate answers every request, even one the API would reject.
	NoValidate bool
	// RejectPrefill rejects requests that end with an assistant message.
	RejectPrefill bool
	// OnStage, when set, is called (synchronously, from the handler) each
	// time a request reaches a stage.
	OnStage func(r *Request, s Stage)
}

// Server is a running mock. Create it with New; Close it when done.
type Server struct {
	cfg  Config
	srv  *httptest.Server
	done chan struct{}

	mu       sync.Mutex
	cond     *sync.Cond
	requests []*Request
	pauses   []*Pause
	closed   bool
	gen      int // bumped on every stage reached
}

// New starts a mock listening on 127.0.0.1.
func New(cfg Config) *Server {
	if cfg.Secret == nil {
		cfg.Secret = DefaultSecret
	}
	if cfg.Script == nil {
		cfg.Script = DefaultScript
	}
	s := &Server{cfg: cfg, done: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.handle))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("mockanthropic: listen: %v", err))
	}
	s.srv.Listener = l
	s.srv.Start()
	return s
}

// URL is the server's root, e.g. http://127.0.0.1:12345.
func (s *Server) URL() string { return s.srv.URL }

// BaseURL is what a provider's baseURL option must be set to
// (URL + "/v1"); OpenCode then POSTs to BaseURL()+"/messages".
func (s *Server) BaseURL() string { return s.srv.URL + "/v1" }

// Secret is the key thinking signatures are made with.
func (s *Server) Secret() []byte { return s.cfg.Secret }

// SetScript replaces the script for requests that arrive from now on.
func (s *Server) SetScript(sc Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.Script = sc
}

// SetEventDelay replaces the delay between SSE events.
func (s *Server) SetEventDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.EventDelay = d
}

// Close releases every pause and stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Requests returns copies of the recorded requests, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = *r
		out[i].Stages = append([]Stage(nil), r.Stages...)
	}
	return out
}

// ChatRequests returns the recorded agent requests (those with tools).
func (s *Server) ChatRequests() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Chat {
			out = append(out, r)
		}
	}
	return out
}

// Rejected returns the recorded requests that were answered with an error.
func (s *Server) Rejected() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Verdict == Rejected {
			out = append(out, r)
		}
	}
	return out
}

// Reset forgets the recorded requests.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
}

// Match selects requests for Pause and WaitStage.
type Match func(r *Request) bool

// AnyRequest matches every request.
func AnyRequest(*Request) bool { return true }

// ChatRequest matches agent requests (they carry tools).
func ChatRequest(r *Request) bool { return r.Chat }

// NthChat matches the n-th (0-based) agent request.
func (s *Server) NthChat(n int) Match {
	return func(r *Request) bool {
		if !r.Chat {
			return false
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		k := 0
		for _, q := range s.requests {
			if q.Index == r.Index {
				return k == n
			}
			if q.Chat {
				k++
			}
		}
		return false
	}
}

// Pause stops the first matching stream at a stage.
type Pause struct {
	stage   Stage
	match   Match
	fired   bool
	reached chan *Request
	release chan struct{}
	once    sync.Once
}

// Reached delivers the request once its stream is held at the stage.
func (p *Pause) Reached() <-chan *Request { return p.reached }

// Release lets the held stream go on (or returns at once if the client has
// gone away).
func (p *Pause) Release() { p.once.Do(func() { close(p.release) }) }

// Pause arranges for the first request matching m (nil: any) to stop right
// after reaching stage, until Release or until the client disconnects. Use it
// to kill a client at a deterministic point of the stream.
func (s *Server) Pause(stage Stage, m Match) *Pause {
	if m == nil {
		m = AnyRequest
	}
	p := &Pause{stage: stage, match: m, reached: make(chan *Request, 1), release: make(chan struct{})}
	s.mu.Lock()
	s.pauses = append(s.pauses, p)
	s.mu.Unlock()
	return p
}

// WaitStage blocks until a request matching m (nil: any) has reached stage,
// and returns a copy of it.
func (s *Server) WaitStage(ctx context.Context, stage Stage, m Match) (Request, error) {
	if m == nil {
		m = AnyRequest
	}
	stop := context.AfterFunc(ctx, func() {
		s.mu.Lock()
		s.gen++
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	defer stop()
	for {
		s.mu.Lock()
		gen := s.gen
		var cands []Request
		for _, r := range s.requests {
			for _, st := range r.Stages {
				if st == stage {
					cp := *r
					cp.Stages = append([]Stage(nil), r.Stages...)
					cands = append(cands, cp)
					break
				}
			}
		}
		s.mu.Unlock()
		for i := range cands {
			if m(&cands[i]) {
				return cands[i], nil
			}
		}
		if err := ctx.Err(); err != nil {
			return Request{}, fmt.Errorf("waiting for stage %s: %w", stage, err)
		}
		s.mu.Lock()
		for s.gen == gen {
			s.cond.Wait()
		}
		s.mu.Unlock()
	}
}

func (s *Server) reach(ctx context.Context, r *Request, st Stage) {
	s.mu.Lock()
	r.Stages = append(r.Stages, st)
	cp := *r
	cp.Stages = append([]Stage(nil), r.Stages...)
	hook := s.cfg.OnStage
	var cands []*Pause
	for _, p := range s.pauses {
		if !p.fired && p.stage == st {
			cands = append(cands, p)
		}
	}
	s.gen++
	s.cond.Broadcast()
	s.mu.Unlock()
	if hook != nil {
		hook(&cp, st)
	}
	var hold *Pause
	for _, p := range cands {
		if !p.match(&cp) {
			continue
		}
		s.mu.Lock()
		if !p.fired {
			p.fired = true
			hold = p
		}
		s.mu.Unlock()
		if hold != nil {
			break
		}
	}
	if hold != nil {
		hold.reached <- &cp
		select {
		case <-hold.release:
		case <-ctx.Done():
		case <-s.done:
		}
	}
}

func (s *Server) handle(w http.ResponseWriter, hr *http.Request) {
	body, _ := io.ReadAll(hr.Body)
	r := &Request{Method: hr.Method, Path: hr.URL.Path, Header: hr.Header.Clone(), Body: body}
	s.mu.Lock()
	r.Index = len(s.requests)
	s.requests = append(s.requests, r)
	cfg := s.cfg
	s.mu.Unlock()

	if hr.Method != http.MethodPost || !strings.HasSuffix(hr.URL.Path, "/messages") {
		s.reject(hr.Context(), w, r, &APIError{Status: http.StatusNotFound, Type: "not_found_error", Message: "Not Found"})
		return
	}
	parsed, err := ParseRequest(body)
	if err != nil {
		s.reject(hr.Context(), w, r, invalid("%s", err.Error()))
		return
	}
	s.mu.Lock()
	r.Parsed = parsed
	r.Chat = len(parsed.Tools) > 0
	s.mu.Unlock()
	if !cfg.NoValidate {
		if e := (Validator{Secret: cfg.Secret, RejectPrefill: cfg.RejectPrefill}).Validate(parsed); e != nil {
			s.reject(hr.Context(), w, r, e)
			return
		}
	}
	turn := cfg.Script(r)
	if turn.Error != nil {
		s.reject(hr.Context(), w, r, turn.Error)
		return
	}
	s.mu.Lock()
	r.Verdict = Accepted
	r.Turn = turn
	s.mu.Unlock()
	s.reach(hr.Context(), r, StageReceived)
	if !parsed.Stream {
		s.answerJSON(w, r, turn, cfg)
		return
	}
	s.stream(hr.Context(), w, r, turn, cfg)
}

func (s *Server) reject(ctx context.Context, w http.ResponseWriter, r *Request, e *APIError) {
	s.mu.Lock()
	r.Verdict = Rejected
	r.Error = e.Message
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", newID("req_"))
	w.WriteHeader(e.Status)
	_, _ = w.Write(e.Body())
	s.reach(ctx, r, StageRejected)
}

func newID(prefix string) string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return prefix + "01" + string(b)
}

// built is a block ready to be sent.
type built struct {
	spec      BlockSpec
	signature string
	data      string
	id        string
	inputJSON string
}

func (s *Server) build(turn Turn, cfg Config) ([]built, string) {
	out := make([]built, 0, len(turn.Blocks))
	stop := turn.StopReason
	for _, b := range turn.Blocks {
		x := built{spec: b}
		switch b.Type {
		case "thinking":
			if b.Signature != nil {
				x.signature = *b.Signature
			} else {
				x.signature = Sign(cfg.Secret, b.Text)
			}
		case "redacted_thinking":
			x.data = RedactedData(cfg.Secret)
		case "tool_use":
			x.id = b.ToolID
			if x.id == "" {
				x.id = newID("toolu_")
			}
			in := b.ToolInput
			if in == nil {
				in = map[string]any{}
			}
			j, _ := json.Marshal(in)
			x.inputJSON = string(j)
			if stop == "" {
				stop = "tool_use"
			}
		}
		out = append(out, x)
	}
	if stop == "" {
		stop = "end_turn"
	}
	return out, stop
}

func usage(r *Request) map[string]int {
	return map[string]int{"input_tokens": len(r.Body)/4 + 1, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
}

func (s *Server) answerJSON(w http.ResponseWriter, r *Request, turn Turn, cfg Config) {
	blocks, stop := s.build(turn, cfg)
	content := []map[string]any{}
	for _, b := range blocks {
		switch b.spec.Type {
		case "thinking":
			content = append(content, map[string]any{"type": "thinking", "thinking": b.spec.Text, "signature": b.signature})
		case "redacted_thinking":
			content = append(content, map[string]any{"type": "redacted_thinking", "data": b.data})
		case "text":
			content = append(content, map[string]any{"type": "text", "text": b.spec.Text})
		case "tool_use":
			content = append(content, map[string]any{"type": "tool_use", "id": b.id, "name": b.spec.ToolName, "input": json.RawMessage(b.inputJSON)})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": newID("msg_"), "type": "message", "role": "assistant", "model": r.Parsed.Model,
		"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage(r),
	})
	s.reach(context.Background(), r, StageDone)
}

// chunks splits s into pieces of about n bytes, on rune boundaries.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		i := n
		for i < len(s) && (s[i]&0xC0) == 0x80 {
			i++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func (s *Server) stream(ctx context.Context, w http.ResponseWriter, r *Request, turn Turn, cfg Config) {
	delay := cfg.EventDelay
	if turn.EventDelay > 0 {
		delay = turn.EventDelay
	}
	fl, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("request-id", newID("req_"))
	w.WriteHeader(http.StatusOK)
	alive := true
	send := func(event string, data any) {
		if !alive {
			return
		}
		if ctx.Err() != nil {
			alive = false
			return
		}
		j, _ := json.Marshal(data)
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, j); err != nil {
			alive = false
			return
		}
		if fl != nil {
			fl.Flush()
		}
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				alive = false
			}
		}
	}
	reach := func(st Stage) {
		if alive {
			s.reach(ctx, r, st)
		}
	}
	blocks, stop := s.build(turn, cfg)
	u := usage(r)
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": newID("msg_"), "type": "message", "role": "assistant", "model": r.Parsed.Model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": u,
	}})
	reach(StageMessageStart)
	send("ping", map[string]any{"type": "ping"})
	for i, b := range blocks {
		switch b.spec.Type {
		case "thinking":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
			for k, c := range chunks(b.spec.Text, 24) {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "thinking_delta", "thinking": c}})
				if k == 0 {
					reach(StageThinkingDelta)
				}
			}
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "signature_delta", "signature": b.signature}})
			send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
			reach(StageThinkingDone)
		case "redacted_thinking":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "redacted_thinking", "data": b.data}})
			send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
			reach(StageThinkingDone)
		case "text":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			reach(StageTextStart)
			for k, c := range chunks(b.spec.Text, 16) {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "text_delta", "text": c}})
				if k == 0 {
					reach(StageTextDelta)
				}
			}
			send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
			reach(StageTextDone)
		case "tool_use":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b.id, "name": b.spec.ToolName, "input": map[string]any{}}})
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": ""}})
			for _, c := range chunks(b.inputJSON, 16) {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": c}})
			}
			send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
			reach(StageToolUse)
		}
	}
	send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": 10 + 5*len(blocks)}})
	reach(StageMessageDelta)
	send("message_stop", map[string]any{"type": "message_stop"})
	reach(StageDone)
}
