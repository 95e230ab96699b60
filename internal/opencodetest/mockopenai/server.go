package mockopenai

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/mockstream"
)

// Dialect is the provider a request is addressed to: it decides the rules
// applied and the exact error texts and bodies.
type Dialect string

// Dialects, each served under /<dialect>/v1.
const (
	// DeepSeek is api.deepseek.com: Chat Completions with DeepSeek's
	// thinking-mode rule and error texts.
	DeepSeek Dialect = "deepseek"
	// Moonshot is Kimi (api.moonshot.ai): Chat Completions with the same
	// rule and Kimi's error text.
	Moonshot Dialect = "moonshot"
	// OpenAI is api.openai.com: the Responses API, and Chat Completions
	// with OpenAI's tool-pairing rule only.
	OpenAI Dialect = "openai"
)

// API is the endpoint a request was sent to.
type API string

// APIs.
const (
	ChatCompletions API = "chat.completions"
	Responses       API = "responses"
)

// Stage is a point in the life of one request's answer.
type Stage = mockstream.Stage

// Stages, in the order a stream passes them. A stage is reached after the
// events that make it up have been written and flushed to the client.
const (
	StageReceived       Stage = mockstream.Received // request decoded and validated
	StageRejected       Stage = mockstream.Rejected // error answer sent
	StageCreated        Stage = "created"           // first chunk / response.created sent
	StageReasoningDelta Stage = "reasoning_delta"   // first reasoning delta sent (mid-reasoning)
	StageReasoningDone  Stage = "reasoning_done"    // whole reasoning sent (Responses: output_item.done with encrypted content)
	StageTextStart      Stage = "text_start"        // Responses: message item and content part added, no text yet
	StageTextDelta      Stage = "text_delta"        // first text delta sent (mid-text)
	StageTextDone       Stage = "text_done"         // whole text sent (Responses: message output_item.done)
	StageToolCall       Stage = "tool_call"         // a whole tool call sent
	StageFinish         Stage = "finish"            // Chat: finish_reason chunk sent; Responses: every output item done, response.completed not yet
	StageDone           Stage = mockstream.Done     // [DONE] / response.completed sent
)

// Verdict says whether a request was accepted.
type Verdict = mockstream.Verdict

// Verdicts.
const (
	Accepted = mockstream.VerdictAccepted
	Rejected = mockstream.VerdictRejected
)

// Parsed is what the mock read from a request: where it went, who sent it
// and its decoded body.
type Parsed struct {
	Dialect Dialect
	API     API
	// Account is the bearer token the request was made with.
	Account string
	// Completions is the body of a Chat Completions request.
	Completions *ChatRequest
	// Responses is the body of a Responses request.
	Responses *ResponsesRequest
	// Thinking is true when a Chat Completions request runs in thinking
	// mode (Config.Thinking).
	Thinking bool
}

// Model is the model the request names.
func (p *Parsed) Model() string {
	switch {
	case p == nil:
		return ""
	case p.Completions != nil:
		return p.Completions.Model
	case p.Responses != nil:
		return p.Responses.Model
	}
	return ""
}

// Answer is what the mock answered: the scripted turn, and for a rejected
// request its HTTP status; for a Responses request the items it issued.
type Answer struct {
	Turn
	// Status is the HTTP status of an error answer.
	Status int
	// Output lists the items a Responses answer issued, in order.
	Output []Item
}

// Request is one recorded request: Parsed says where it went and holds its
// body, Chat is true for agent requests (they carry tools; OpenCode's title
// requests have none), Turn is what was answered.
type Request = mockstream.Call[*Parsed, Answer]

// Match selects requests for Pause and WaitStage.
type Match = mockstream.Match[*Parsed, Answer]

// Pause holds the first matching stream at a stage.
type Pause = mockstream.Pause[*Parsed, Answer]

// Config configures a Server. The zero value works.
type Config struct {
	// Secret makes encrypted reasoning content (DefaultSecret when nil).
	Secret []byte
	// Script chooses answers (DefaultScript when nil).
	Script Script
	// EventDelay is slept between stream events.
	EventDelay time.Duration
	// NoValidate answers every request, even one the API would reject.
	NoValidate bool
	// ReasoningScope says which assistant tool-call messages the thinking
	// rule checks (ScopeSinceLastUser when empty).
	ReasoningScope Scope
	// RejectEmptyReasoning counts reasoning_content "" as missing (the
	// strict Reading).
	RejectEmptyReasoning bool
	// Mistral applies Mistral's rule on tool call ids to every Chat
	// Completions request; a Mistral-family model's requests get it anyway
	// (MistralFamily).
	Mistral bool
	// Thinking decides whether a Chat Completions request runs in
	// thinking mode (ThinkingOn when nil).
	Thinking func(d Dialect, r *ChatRequest) bool
	// MaxPromptTokens, when positive, is the model's context window: a
	// request whose prompt counts more tokens (PromptTokens) is refused
	// with OpenAI's context_length_exceeded (MsgContextLength on Chat
	// Completions, TextContextWindow on the Responses API).
	MaxPromptTokens int
	// MaxRequestBytes, when positive, is the request body size OpenAI's
	// edge lets through: a larger body is answered with the edge's HTTP
	// 413 page (EdgeTooLargePage) before the API reads it. The real limit
	// is not published; tests set one to fit their files.
	MaxRequestBytes int
	// MaxChatImages, when positive, is the most images a Chat Completions
	// request may hold, as a vLLM server started with a limit per prompt:
	// more are refused with vLLM's text (MsgTooManyImagesVLLM).
	MaxChatImages int
	// MaxConsoleImages, when positive, is the most images a Responses
	// request may hold, as OpenCode Console (OpenCode Zen) takes (50):
	// more are refused with Console's text (MsgTooManyImagesConsole) in
	// OpenAI's invalid_request_error body, a stand-in (users quote the
	// text, not the body or status).
	MaxConsoleImages int
	// OnStage, when set, is called (synchronously, from the handler) each
	// time a request reaches a stage.
	OnStage func(r *Request, s Stage)
}

// Server is a running mock. Create it with New; Close it when done.
type Server struct {
	// base is the shared skeleton; it is not embedded because its "chat"
	// requests are this mock's agent requests, and ChatRequest here is a
	// Chat Completions body.
	base  *mockstream.Server[*Parsed, Answer, Config]
	items *registry
}

// New starts a mock listening on 127.0.0.1.
func New(cfg Config) *Server {
	if cfg.Secret == nil {
		cfg.Secret = DefaultSecret
	}
	if cfg.Script == nil {
		cfg.Script = DefaultScript
	}
	if cfg.Thinking == nil {
		cfg.Thinking = ThinkingOn
	}
	if cfg.ReasoningScope == "" {
		cfg.ReasoningScope = ScopeSinceLastUser
	}
	s := &Server{items: newRegistry()}
	s.base = mockstream.Start(cfg, cfg.OnStage, s.handle)
	return s
}

// SetMaxPromptTokens sets Config.MaxPromptTokens.
func (s *Server) SetMaxPromptTokens(n int) {
	s.base.Configure(func(c *Config) { c.MaxPromptTokens = n })
}

// SetMaxChatImages sets Config.MaxChatImages.
func (s *Server) SetMaxChatImages(n int) {
	s.base.Configure(func(c *Config) { c.MaxChatImages = n })
}

// SetMaxConsoleImages sets Config.MaxConsoleImages.
func (s *Server) SetMaxConsoleImages(n int) {
	s.base.Configure(func(c *Config) { c.MaxConsoleImages = n })
}

// SetMaxRequestBytes sets Config.MaxRequestBytes.
func (s *Server) SetMaxRequestBytes(n int) {
	s.base.Configure(func(c *Config) { c.MaxRequestBytes = n })
}

// PromptTokens is the mock's token count of a request: its body's bytes
// / 4 + 1, as mockanthropic counts (the real tokenizer is not public;
// about 4 bytes a token on English text). It is the input_tokens the
// Responses API reports and what Config.MaxPromptTokens is checked
// against.
func PromptTokens(body []byte) int { return len(body)/4 + 1 }

// URL is the server's root, e.g. http://127.0.0.1:12345.
func (s *Server) URL() string { return s.base.URL() }

// BaseURL is what a provider's baseURL option must be set to for dialect d
// (URL + "/<d>/v1"); OpenCode then POSTs to BaseURL(d)+"/chat/completions"
// or BaseURL(d)+"/responses".
func (s *Server) BaseURL(d Dialect) string { return s.URL() + "/" + string(d) + "/v1" }

// Secret is the key encrypted reasoning content is made with.
func (s *Server) Secret() []byte { return s.base.Config().Secret }

// SetScript replaces the script for requests that arrive from now on.
func (s *Server) SetScript(sc Script) { s.base.Configure(func(c *Config) { c.Script = sc }) }

// SetEventDelay replaces the delay between stream events.
func (s *Server) SetEventDelay(d time.Duration) {
	s.base.Configure(func(c *Config) { c.EventDelay = d })
}

// SetReasoningScope replaces the scope of the thinking rule.
func (s *Server) SetReasoningScope(sc Scope) {
	s.base.Configure(func(c *Config) { c.ReasoningScope = sc })
}

// SetReading replaces the reading of the thinking rule (its scope and
// whether "" counts as passed back).
func (s *Server) SetReading(r Reading) {
	s.base.Configure(func(c *Config) {
		c.ReasoningScope, c.RejectEmptyReasoning = r.Scope, r.RejectEmpty
		if r.Scope == "" {
			c.ReasoningScope = ScopeSinceLastUser
		}
	})
}

// Reading is the reading of the thinking rule the server applies.
func (s *Server) Reading() Reading {
	cfg := s.base.Config()
	return Reading{Scope: cfg.ReasoningScope, RejectEmpty: cfg.RejectEmptyReasoning}
}

// Close releases every pause and stops the server.
func (s *Server) Close() { s.base.Close() }

// Requests returns copies of the recorded requests, in arrival order.
func (s *Server) Requests() []Request { return s.base.Requests() }

// AgentRequests returns the recorded agent requests (those with tools).
func (s *Server) AgentRequests() []Request { return s.base.ChatRequests() }

// Rejected returns the recorded requests that were answered with an error.
func (s *Server) Rejected() []Request { return s.base.Rejected() }

// Reset forgets the recorded requests (not the items stored with store:
// true, nor what encrypted content was issued).
func (s *Server) Reset() { s.base.Reset() }

// AnyRequest matches every request.
func AnyRequest(*Request) bool { return true }

// AgentRequest matches agent requests (they carry tools).
func AgentRequest(r *Request) bool { return r.Chat }

// NthAgent matches the n-th (0-based) agent request.
func (s *Server) NthAgent(n int) Match { return s.base.NthChat(n) }

// Pause arranges for the first request matching m (nil: any) to stop right
// after reaching stage, until Release or until the client disconnects.
func (s *Server) Pause(stage Stage, m Match) *Pause { return s.base.Pause(stage, m) }

// WaitStage blocks until a request matching m (nil: any) has reached stage,
// and returns a copy of it.
func (s *Server) WaitStage(ctx context.Context, stage Stage, m Match) (Request, error) {
	return s.base.WaitStage(ctx, stage, m)
}

// route splits /<dialect>/v1/<endpoint> into its dialect and API.
func route(path string) (Dialect, API, bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) < 3 || parts[1] != "v1" {
		return "", "", false
	}
	d := Dialect(parts[0])
	switch d {
	case DeepSeek, Moonshot, OpenAI:
	default:
		return "", "", false
	}
	switch strings.Join(parts[2:], "/") {
	case "chat/completions":
		return d, ChatCompletions, true
	case "responses":
		if d != OpenAI {
			return "", "", false
		}
		return d, Responses, true
	}
	return "", "", false
}

func bearer(h http.Header) string {
	a := h.Get("Authorization")
	if k, ok := strings.CutPrefix(a, "Bearer "); ok {
		return k
	}
	return a
}

func (s *Server) handle(w http.ResponseWriter, hr *http.Request, r *Request, cfg Config) {
	d, api, ok := route(hr.URL.Path)
	p := &Parsed{Dialect: d, API: api, Account: bearer(hr.Header)}
	s.base.Update(r, func(r *Request) { r.Parsed = p })
	if hr.Method != http.MethodPost || !ok {
		s.reject(hr.Context(), w, r, notFound(d, hr.Method, hr.URL.Path))
		return
	}
	if p.Account == "" {
		s.reject(hr.Context(), w, r, noKey(d))
		return
	}
	switch api {
	case ChatCompletions:
		s.handleChat(hr.Context(), w, r, p, cfg)
	case Responses:
		s.handleResponses(hr.Context(), w, r, p, cfg)
	}
}

func (s *Server) reject(ctx context.Context, w http.ResponseWriter, r *Request, e *APIError) {
	s.base.Update(r, func(r *Request) { r.Turn.Status = e.Status })
	s.base.Reject(ctx, w, r, e.Message, e.write)
}

const idAlphabet = "0123456789abcdef"

// newID returns prefix followed by 48 hex digits, the shape of OpenAI's
// item ids (rs_…, msg_…, fc_…, resp_…).
func newID(prefix string) string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	out := make([]byte, 0, 48)
	for _, c := range b {
		out = append(out, idAlphabet[c>>4], idAlphabet[c&15])
	}
	return prefix + string(out)
}

// sse writes server-sent events, optionally named (Chat Completions sends
// bare data lines), through the paced stream of one request's answer.
type sse struct {
	*mockstream.Stream[*Parsed, Answer]
}

func (s *Server) newSSE(ctx context.Context, w http.ResponseWriter, r *Request, delay time.Duration) sse {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("x-request-id", newID("req_"))
	w.WriteHeader(http.StatusOK)
	return sse{s.base.Stream(ctx, w, r, delay)}
}

// send writes one event. data is JSON-encoded unless it is a string.
func (e sse) send(name string, data any) {
	payload, ok := data.(string)
	if !ok {
		j, _ := json.Marshal(data)
		payload = string(j)
	}
	if name != "" {
		e.Frame(fmt.Appendf(nil, "event: %s\ndata: %s\n\n", name, payload))
		return
	}
	e.Frame(fmt.Appendf(nil, "data: %s\n\n", payload))
}
