package mockanthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/mockstream"
)

// Stage is a point in the life of one request's answer.
type Stage = mockstream.Stage

// Stages, in the order a stream passes them. A stage is reached after the
// events that make it up have been written and flushed to the client.
const (
	StageReceived      Stage = mockstream.Received // request decoded and validated
	StageRejected      Stage = mockstream.Rejected // error answer sent
	StageMessageStart  Stage = "message_start"     // message_start sent
	StageThinkingDelta Stage = "thinking_delta"    // first thinking_delta sent (mid-thinking, no signature yet)
	StageThinkingDone  Stage = "thinking_done"     // signature_delta and content_block_stop of a thinking block sent
	StageTextStart     Stage = "text_start"        // content_block_start of a text block sent, no text yet
	StageTextDelta     Stage = "text_delta"        // first text_delta sent (mid-text)
	StageTextDone      Stage = "text_done"         // content_block_stop of a text block sent
	StageToolUse       Stage = "tool_use"          // a whole tool_use block sent
	StageMessageDelta  Stage = "message_delta"     // message_delta (stop_reason) sent, message_stop not yet
	StageDone          Stage = mockstream.Done     // message_stop sent
)

// Verdict says whether a request was accepted.
type Verdict = mockstream.Verdict

// Verdicts.
const (
	Accepted = mockstream.VerdictAccepted
	Rejected = mockstream.VerdictRejected
)

// Request is one recorded request: Parsed is its decoded body, Turn what
// was answered.
type Request = mockstream.Call[*MessagesRequest, Turn]

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
	// MaxPromptTokens, when positive, is the model's context window: a
	// request whose prompt counts more tokens (PromptTokens) is rejected
	// with Anthropic's "prompt is too long: N tokens > M maximum".
	MaxPromptTokens int
	// UnreadablePDF, when set, marks the PDFs the mock cannot process: a
	// request holding a base64 document whose bytes contain it is refused
	// with the API's "Could not process PDF" (TextPDFUnprocessable). The
	// API gives that answer for PDFs within every stated limit for
	// reasons users could not find (OBSERVED.md), so the mock is told
	// which PDF it is.
	UnreadablePDF []byte
	// UnreadableImage, when set, marks the images the mock cannot
	// process: a request holding a base64 image (a tool result's among
	// them) whose bytes contain it is refused with the API's "Could not
	// process image" (TextImageUnprocessable). The API gives that answer
	// for images whose type it takes, for reasons it does not name
	// (OBSERVED.md), so the mock is told which image it is.
	UnreadableImage []byte
	// OnStage, when set, is called (synchronously, from the handler) each
	// time a request reaches a stage.
	OnStage func(r *Request, s Stage)
}

// Server is a running mock. Create it with New; Close it when done.
type Server struct {
	*mockstream.Server[*MessagesRequest, Turn, Config]
}

// New starts a mock listening on 127.0.0.1.
func New(cfg Config) *Server {
	if cfg.Secret == nil {
		cfg.Secret = DefaultSecret
	}
	if cfg.Script == nil {
		cfg.Script = DefaultScript
	}
	s := &Server{}
	s.Server = mockstream.Start(cfg, cfg.OnStage, s.handle)
	return s
}

// BaseURL is what a provider's baseURL option must be set to
// (URL + "/v1"); OpenCode then POSTs to BaseURL()+"/messages".
func (s *Server) BaseURL() string { return s.URL() + "/v1" }

// Secret is the key thinking signatures are made with.
func (s *Server) Secret() []byte { return s.Config().Secret }

// SetScript replaces the script for requests that arrive from now on.
func (s *Server) SetScript(sc Script) { s.Configure(func(c *Config) { c.Script = sc }) }

// SetMaxPromptTokens sets Config.MaxPromptTokens.
func (s *Server) SetMaxPromptTokens(n int) { s.Configure(func(c *Config) { c.MaxPromptTokens = n }) }

// SetUnreadablePDF sets Config.UnreadablePDF.
func (s *Server) SetUnreadablePDF(marker []byte) {
	s.Configure(func(c *Config) { c.UnreadablePDF = marker })
}

// SetUnreadableImage sets Config.UnreadableImage.
func (s *Server) SetUnreadableImage(marker []byte) {
	s.Configure(func(c *Config) { c.UnreadableImage = marker })
}

// SetEventDelay replaces the delay between SSE events.
func (s *Server) SetEventDelay(d time.Duration) { s.Configure(func(c *Config) { c.EventDelay = d }) }

// Match selects requests for Pause and WaitStage.
type Match = mockstream.Match[*MessagesRequest, Turn]

// AnyRequest matches every request.
func AnyRequest(*Request) bool { return true }

// ChatRequest matches agent requests (they carry tools).
func ChatRequest(r *Request) bool { return r.Chat }

// Pause stops the first matching stream at a stage.
type Pause = mockstream.Pause[*MessagesRequest, Turn]

func (s *Server) handle(w http.ResponseWriter, hr *http.Request, r *Request, cfg Config) {
	if hr.Method != http.MethodPost || !strings.HasSuffix(hr.URL.Path, "/messages") {
		s.reject(hr.Context(), w, r, &APIError{Status: http.StatusNotFound, Type: "not_found_error", Message: "Not Found"})
		return
	}
	parsed, err := ParseRequest(r.Body)
	if err == nil {
		s.Update(r, func(r *Request) {
			r.Parsed = parsed
			r.Chat = len(parsed.Tools) > 0
		})
	}
	// The size limit comes before any other answer: the real API's
	// answer to an oversized body is sent before the request reaches the
	// API (RequestBytesMax). The body is decoded first only so that the
	// record says what was sent.
	if !cfg.NoValidate && len(r.Body) > RequestBytesMax {
		s.reject(hr.Context(), w, r, RequestTooLarge())
		return
	}
	if err != nil {
		s.reject(hr.Context(), w, r, invalid("%s", err.Error()))
		return
	}
	if !cfg.NoValidate {
		if e := (Validator{Secret: cfg.Secret, RejectPrefill: cfg.RejectPrefill}).Validate(parsed); e != nil {
			s.reject(hr.Context(), w, r, e)
			return
		}
	}
	if len(cfg.UnreadablePDF) > 0 && parsed != nil && holdsPDF(parsed.Messages, cfg.UnreadablePDF) {
		s.reject(hr.Context(), w, r, invalid("%s", TextPDFUnprocessable))
		return
	}
	if len(cfg.UnreadableImage) > 0 && parsed != nil && holdsImage(parsed.Messages, cfg.UnreadableImage) {
		s.reject(hr.Context(), w, r, invalid("%s", TextImageUnprocessable))
		return
	}
	if n := PromptTokens(r.Body); cfg.MaxPromptTokens > 0 && n > cfg.MaxPromptTokens {
		s.reject(hr.Context(), w, r, &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: MsgPromptTooLong(n, cfg.MaxPromptTokens)})
		return
	}
	turn := cfg.Script(r)
	if turn.Error != nil {
		s.reject(hr.Context(), w, r, turn.Error)
		return
	}
	s.Accept(hr.Context(), r, turn)
	if !parsed.Stream {
		s.answerJSON(w, r, turn, cfg)
		return
	}
	s.stream(hr.Context(), w, r, turn, cfg)
}

func (s *Server) reject(ctx context.Context, w http.ResponseWriter, r *Request, e *APIError) {
	s.Reject(ctx, w, r, e.Message, e.write)
}

// PromptTokens is the mock's token count of a request: its body's bytes
// divided by 4, plus 1. The real tokenizer is not public; this count is
// deterministic, is what the mock reports as the request's input_tokens
// (which OpenCode stores as the assistant message's tokens.input) and what
// MaxPromptTokens is checked against.
func PromptTokens(body []byte) int { return len(body)/4 + 1 }

// MsgPromptTooLong is Anthropic's error for a prompt over the context
// window (the text users quote, e.g. anthropics/claude-code#2104).
func MsgPromptTooLong(n, max int) string {
	return fmt.Sprintf("prompt is too long: %d tokens > %d maximum", n, max)
}

func usage(r *Request) map[string]int {
	return map[string]int{"input_tokens": PromptTokens(r.Body), "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
}

func (s *Server) answerJSON(w http.ResponseWriter, r *Request, turn Turn, cfg Config) {
	blocks, stop := Messages.Build(turn.Blocks, turn.StopReason, cfg.Secret)
	content := []map[string]any{}
	for _, b := range blocks {
		switch b.Spec.Type {
		case "thinking":
			content = append(content, map[string]any{"type": "thinking", "thinking": b.Spec.Text, "signature": b.Signature})
		case "redacted_thinking":
			content = append(content, map[string]any{"type": "redacted_thinking", "data": b.Data})
		case "text":
			content = append(content, map[string]any{"type": "text", "text": b.Spec.Text})
		case "tool_use":
			content = append(content, map[string]any{"type": "tool_use", "id": b.ID, "name": b.Spec.ToolName, "input": json.RawMessage(b.InputJSON)})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": mockstream.NewID("msg_"), "type": "message", "role": "assistant", "model": r.Parsed.Model,
		"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage(r),
	})
	s.Answered(r)
}

func (s *Server) stream(ctx context.Context, w http.ResponseWriter, r *Request, turn Turn, cfg Config) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("request-id", mockstream.NewID("req_"))
	w.WriteHeader(http.StatusOK)
	out := s.Stream(ctx, w, r, mockstream.Delay(cfg.EventDelay, turn.EventDelay))
	send := func(event string, data any) {
		j, _ := json.Marshal(data)
		out.Frame(fmt.Appendf(nil, "event: %s\ndata: %s\n\n", event, j))
	}
	blocks, stop := Messages.Build(turn.Blocks, turn.StopReason, cfg.Secret)
	u := usage(r)
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": mockstream.NewID("msg_"), "type": "message", "role": "assistant", "model": r.Parsed.Model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": u,
	}})
	out.Reach(StageMessageStart)
	send("ping", map[string]any{"type": "ping"})
	for i, b := range blocks {
		switch b.Spec.Type {
		case "thinking":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
			for k, c := range mockstream.Chunks(b.Spec.Text, 24) {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "thinking_delta", "thinking": c}})
				if k == 0 {
					out.Reach(StageThinkingDelta)
				}
			}
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "signature_delta", "signature": b.Signature}})
			send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
			out.Reach(StageThinkingDone)
		case "redacted_thinking":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "redacted_thinking", "data": b.Data}})
			send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
			out.Reach(StageThinkingDone)
		case "text":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			out.Reach(StageTextStart)
			for k, c := range mockstream.Chunks(b.Spec.Text, 16) {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "text_delta", "text": c}})
				if k == 0 {
					out.Reach(StageTextDelta)
				}
			}
			send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
			out.Reach(StageTextDone)
		case "tool_use":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b.ID, "name": b.Spec.ToolName, "input": map[string]any{}}})
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": ""}})
			for _, c := range mockstream.Chunks(b.InputJSON, 16) {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": c}})
			}
			send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
			out.Reach(StageToolUse)
		}
	}
	send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": 10 + 5*len(blocks)}})
	out.Reach(StageMessageDelta)
	send("message_stop", map[string]any{"type": "message_stop"})
	out.Reach(StageDone)
}
