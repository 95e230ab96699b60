package mockgemini

import (
	"bytes"
	"context"
	"encoding/base64"
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
// chunks that make it up have been written and flushed to the client.
const (
	StageReceived     Stage = mockstream.Received // request decoded and validated
	StageRejected     Stage = mockstream.Rejected // error answer sent
	StageThoughtDelta Stage = "thought_delta"     // first thought chunk sent (mid-thought)
	StageThoughtDone  Stage = "thought_done"      // last thought chunk sent
	StageTextDelta    Stage = "text_delta"        // first text chunk sent (mid-text)
	StageTextDone     Stage = "text_done"         // last text chunk sent, finish chunk not yet
	StageFunctionCall Stage = "function_call"     // the chunk with the functionCall parts sent, finish chunk not yet
	StageDone         Stage = mockstream.Done     // final chunk (finishReason, usage, signature of a text answer) sent
)

// Verdict says whether a request was accepted.
type Verdict = mockstream.Verdict

// Verdicts.
const (
	Accepted = mockstream.VerdictAccepted
	Rejected = mockstream.VerdictRejected
)

// Request is one recorded request: Parsed is its decoded body (with the
// model from the URL), Turn what was answered.
type Request = mockstream.Call[*GenerateContentRequest, Turn]

// Match selects requests for Pause and WaitStage.
type Match = mockstream.Match[*GenerateContentRequest, Turn]

// Pause holds the first matching stream at a stage.
type Pause = mockstream.Pause[*GenerateContentRequest, Turn]

// AnyRequest matches every request.
func AnyRequest(*Request) bool { return true }

// ChatRequest matches agent requests (they declare functions).
func ChatRequest(r *Request) bool { return r.Chat }

// Config configures a Server. The zero value works.
type Config struct {
	// Secret signs thought signatures (DefaultSecret when nil).
	Secret []byte
	// APIKey, when set, must be sent as x-goog-api-key (or ?key=).
	APIKey string
	// Script chooses answers (DefaultScript when nil).
	Script Script
	// EventDelay is slept between chunks.
	EventDelay time.Duration
	// NoValidate answers every request, even one the API would reject.
	NoValidate bool
	// MaxPromptTokens, when positive, is the model's context window: a
	// request whose prompt counts more tokens (PromptTokens) is refused
	// with 400 INVALID_ARGUMENT MsgInputTokenCount.
	MaxPromptTokens int
	// UnreadableImage, when set, marks the images the mock cannot
	// process: a request holding an inline image whose bytes contain it
	// is refused with 400 INVALID_ARGUMENT TextUnableToProcessImage, which
	// asks for a retry. Users quote that text for images of a type Gemini
	// takes, for reasons not named (OBSERVED.md), so the mock is told
	// which image it is; every retry is refused the same way.
	UnreadableImage []byte
	// OnStage, when set, is called (synchronously, from the handler) each
	// time a request reaches a stage.
	OnStage func(r *Request, s Stage)
}

// Server is a running mock. Create it with New; Close it when done.
type Server struct {
	*mockstream.Server[*GenerateContentRequest, Turn, Config]
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

// BaseURL is what the google provider's baseURL option must be set to
// (URL + "/v1beta"); OpenCode then POSTs to
// BaseURL()+"/models/<model>:streamGenerateContent?alt=sse".
func (s *Server) BaseURL() string { return s.URL() + "/v1beta" }

// Secret is the key thought signatures are made with.
func (s *Server) Secret() []byte { return s.Config().Secret }

// SetScript replaces the script for requests that arrive from now on.
func (s *Server) SetScript(sc Script) { s.Configure(func(c *Config) { c.Script = sc }) }

// SetUnreadableImage sets Config.UnreadableImage.
func (s *Server) SetUnreadableImage(marker []byte) {
	s.Configure(func(c *Config) { c.UnreadableImage = marker })
}

// SetMaxPromptTokens sets Config.MaxPromptTokens.
func (s *Server) SetMaxPromptTokens(n int) { s.Configure(func(c *Config) { c.MaxPromptTokens = n }) }

// PromptTokens is the mock's token count of a request: its body's bytes
// / 4 + 1, as mockanthropic counts (the real tokenizer is not public).
// It is what Config.MaxPromptTokens is checked against.
func PromptTokens(body []byte) int { return len(body)/4 + 1 }

// MsgInputTokenCount is Gemini's refusal of a request of n tokens to a
// model whose input limit is limit tokens, as users quote it
// (google-gemini/gemini-cli#4118, #6678).
func MsgInputTokenCount(n, limit int) string {
	return fmt.Sprintf("The input token count (%d) exceeds the maximum number of tokens allowed (%d).", n, limit)
}

// SetSecret replaces the signing secret for requests that arrive from now
// on (as if the user switched to another account).
func (s *Server) SetSecret(secret []byte) { s.Configure(func(c *Config) { c.Secret = secret }) }

// SetEventDelay replaces the delay between chunks.
func (s *Server) SetEventDelay(d time.Duration) { s.Configure(func(c *Config) { c.EventDelay = d }) }

// route splits ".../models/<model>:<method>" into model and method.
func route(path string) (model, method string, ok bool) {
	i := strings.LastIndex(path, "/models/")
	if i < 0 {
		return "", "", false
	}
	model, method, ok = strings.Cut(path[i+len("/models/"):], ":")
	return model, method, ok && model != ""
}

func (s *Server) handle(w http.ResponseWriter, hr *http.Request, r *Request, cfg Config) {
	model, method, ok := route(hr.URL.Path)
	stream := method == "streamGenerateContent"
	if hr.Method != http.MethodPost || !ok || (!stream && method != "generateContent") {
		s.reject(hr.Context(), w, r, &APIError{Code: http.StatusNotFound, Status: "NOT_FOUND",
			Message: fmt.Sprintf("models/%s is not found for API version v1beta, or is not supported for %s.", model, method)})
		return
	}
	if cfg.APIKey != "" && hr.Header.Get("x-goog-api-key") != cfg.APIKey && hr.URL.Query().Get("key") != cfg.APIKey {
		s.reject(hr.Context(), w, r, invalid("%s", TextInvalidAPIKey))
		return
	}
	parsed, err := ParseRequest(model, r.Body)
	if err != nil {
		s.reject(hr.Context(), w, r, invalid("Invalid JSON payload received. %s", err))
		return
	}
	s.Update(r, func(r *Request) {
		r.Parsed = parsed
		r.Chat = parsed.HasFunctions()
	})
	if !cfg.NoValidate {
		if e := (Validator{Secret: cfg.Secret}).Validate(parsed); e != nil {
			s.reject(hr.Context(), w, r, e)
			return
		}
	}
	if len(cfg.UnreadableImage) > 0 && holdsImage(parsed, cfg.UnreadableImage) {
		s.reject(hr.Context(), w, r, invalid("%s", TextUnableToProcessImage))
		return
	}
	if n := PromptTokens(r.Body); cfg.MaxPromptTokens > 0 && n > cfg.MaxPromptTokens {
		s.reject(hr.Context(), w, r, invalid("%s", MsgInputTokenCount(n, cfg.MaxPromptTokens)))
		return
	}
	turn := cfg.Script(r)
	if turn.Error != nil {
		s.reject(hr.Context(), w, r, turn.Error)
		return
	}
	s.Accept(hr.Context(), r, turn)
	chunks := s.build(parsed, turn, cfg)
	if !stream {
		s.answerJSON(w, r, chunks)
		return
	}
	s.stream(hr.Context(), w, r, chunks, turn, cfg)
}

func (s *Server) reject(ctx context.Context, w http.ResponseWriter, r *Request, e *APIError) {
	s.Reject(ctx, w, r, e.Message, e.write)
}

// chunk is one streamed GenerateContentResponse and the stage it completes.
type chunk struct {
	parts  []map[string]any
	finish bool
	stage  Stage
}

// build turns a scripted answer into the chunks of the stream.
func (s *Server) build(req *GenerateContentRequest, turn Turn, cfg Config) []chunk {
	var out []chunk
	sig := func() string {
		if turn.Signature != nil {
			return *turn.Signature
		}
		return Sign(cfg.Secret, req.Model)
	}
	if turn.Thought != "" && req.ThinkingEnabled() {
		pieces := mockstream.Chunks(turn.Thought, 24)
		for i, p := range pieces {
			c := chunk{parts: []map[string]any{{"text": p, "thought": true}}}
			if i == 0 {
				c.stage = StageThoughtDelta
			}
			out = append(out, c)
		}
		out = append(out, chunk{stage: StageThoughtDone})
	}
	if turn.Text != "" {
		pieces := mockstream.Chunks(turn.Text, 16)
		for i, p := range pieces {
			c := chunk{parts: []map[string]any{{"text": p}}}
			if i == 0 {
				c.stage = StageTextDelta
			}
			out = append(out, c)
		}
		out = append(out, chunk{stage: StageTextDone})
	}
	if len(turn.Calls) > 0 {
		c := chunk{stage: StageFunctionCall}
		for i, call := range turn.Calls {
			fc := map[string]any{"name": call.Name, "args": call.Args}
			if call.Args == nil {
				fc["args"] = map[string]any{}
			}
			if call.ID != "" {
				fc["id"] = call.ID
			}
			p := map[string]any{"functionCall": fc}
			if i == 0 {
				if v := sig(); v != "" {
					p["thoughtSignature"] = v
				}
			}
			c.parts = append(c.parts, p)
		}
		out = append(out, c)
	}
	final := map[string]any{"text": ""}
	if len(turn.Calls) == 0 {
		if v := sig(); v != "" {
			final["thoughtSignature"] = v
		}
	}
	return append(out, chunk{parts: []map[string]any{final}, finish: true, stage: StageDone})
}

func (s *Server) response(r *Request, turn Turn, parts []map[string]any, finish bool) map[string]any {
	cand := map[string]any{"content": map[string]any{"parts": parts, "role": "model"}, "index": 0}
	resp := map[string]any{"candidates": []any{cand}, "modelVersion": r.Parsed.Model, "responseId": mockstream.NewID("")[2:]}
	if finish {
		reason := turn.FinishReason
		if reason == "" {
			reason = "STOP"
		}
		cand["finishReason"] = reason
		prompt := len(r.Body)/4 + 1
		resp["usageMetadata"] = map[string]any{"promptTokenCount": prompt, "candidatesTokenCount": 10,
			"thoughtsTokenCount": 5, "totalTokenCount": prompt + 15}
	}
	return resp
}

func (s *Server) answerJSON(w http.ResponseWriter, r *Request, chunks []chunk) {
	// One part per thought, text and call: the streamed pieces joined.
	var parts []map[string]any
	for _, c := range chunks {
		for _, p := range c.parts {
			t, isText := p["text"].(string)
			if isText && t == "" && p["thoughtSignature"] == nil {
				continue
			}
			if n := len(parts); isText && n > 0 && p["thoughtSignature"] == nil {
				if prev, ok := parts[n-1]["text"].(string); ok && parts[n-1]["thought"] == p["thought"] {
					parts[n-1]["text"] = prev + t
					continue
				}
			}
			parts = append(parts, p)
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_ = json.NewEncoder(w).Encode(s.response(r, r.Turn, parts, true))
	s.Answered(r)
}

func (s *Server) stream(ctx context.Context, w http.ResponseWriter, r *Request, chunks []chunk, turn Turn, cfg Config) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	out := s.Stream(ctx, w, r, mockstream.Delay(cfg.EventDelay, turn.EventDelay))
	for _, c := range chunks {
		if len(c.parts) > 0 {
			j, _ := json.Marshal(s.response(r, turn, c.parts, c.finish))
			out.Frame(fmt.Appendf(nil, "data: %s\r\n\r\n", j))
		}
		if c.stage != "" {
			out.Reach(c.stage)
		}
	}
}

// holdsImage reports whether an inline image of the request decodes to
// bytes that contain marker.
func holdsImage(r *GenerateContentRequest, marker []byte) bool {
	for _, data := range r.Images() {
		if raw, err := base64.StdEncoding.DecodeString(data); err == nil && bytes.Contains(raw, marker) {
			return true
		}
	}
	return false
}
