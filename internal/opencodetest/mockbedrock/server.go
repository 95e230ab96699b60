package mockbedrock

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/sessfix/sessfix/internal/opencodetest/mockstream"
)

// Stage is a point in the life of one request's answer.
type Stage = mockstream.Stage

// Stages, in the order a stream passes them. A stage is reached after the
// events that make it up have been written and flushed to the client.
const (
	StageReceived       Stage = mockstream.Received // request decoded and validated
	StageRejected       Stage = mockstream.Rejected // error answer sent
	StageMessageStart   Stage = "message_start"     // messageStart sent
	StageReasoningDelta Stage = "reasoning_delta"   // first reasoning text delta sent (mid-reasoning, no signature yet)
	StageReasoningDone  Stage = "reasoning_done"    // signature delta and contentBlockStop of a reasoning block sent
	StageTextDelta      Stage = "text_delta"        // first text delta sent (mid-text)
	StageTextDone       Stage = "text_done"         // contentBlockStop of a text block sent
	StageToolUse        Stage = "tool_use"          // a whole toolUse block sent
	StageMessageStop    Stage = "message_stop"      // messageStop (stopReason) sent, metadata not yet
	StageDone           Stage = mockstream.Done     // metadata (usage) sent
)

// Verdict says whether a request was accepted.
type Verdict = mockstream.Verdict

// Verdicts.
const (
	Accepted = mockstream.VerdictAccepted
	Rejected = mockstream.VerdictRejected
)

// Request is one recorded request: Parsed is its decoded body (with the
// model id from the URL), Turn what was answered.
type Request = mockstream.Call[*ConverseRequest, Turn]

// Match selects requests for Pause and WaitStage.
type Match = mockstream.Match[*ConverseRequest, Turn]

// Pause holds the first matching stream at a stage.
type Pause = mockstream.Pause[*ConverseRequest, Turn]

// AnyRequest matches every request.
func AnyRequest(*Request) bool { return true }

// ChatRequest matches agent requests (they declare tools).
func ChatRequest(r *Request) bool { return r.Chat }

// Config configures a Server. The zero value works.
type Config struct {
	// Secret signs reasoning (DefaultSecret when nil).
	Secret []byte
	// BearerToken, when set, is the only Bedrock API key accepted as
	// "Authorization: Bearer …" (what OpenCode sends when
	// AWS_BEARER_TOKEN_BEDROCK or the provider's bearerToken option is set).
	BearerToken string
	// AccessKeyID, when set, is the only access key accepted in a SigV4
	// Authorization header (what OpenCode sends with AWS_ACCESS_KEY_ID and
	// AWS_SECRET_ACCESS_KEY). The signature itself is not checked.
	AccessKeyID string
	// Script chooses answers (DefaultScript when nil).
	Script Script
	// EventDelay is slept between events.
	EventDelay time.Duration
	// NoValidate answers every request, even one Bedrock would reject.
	NoValidate bool
	// OnStage, when set, is called (synchronously, from the handler) each
	// time a request reaches a stage.
	OnStage func(r *Request, s Stage)
}

// Server is a running mock. Create it with New; Close it when done.
type Server struct {
	*mockstream.Server[*ConverseRequest, Turn, Config]
}

// New starts a mock listening on 127.0.0.1. Its URL (e.g.
// http://127.0.0.1:12345) is what the amazon-bedrock provider's endpoint
// (or baseURL) option must be set to; OpenCode then POSTs to
// URL()+"/model/<model id>/converse-stream".
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

// Secret is the key reasoning signatures are made with.
func (s *Server) Secret() []byte { return s.Config().Secret }

// SetScript replaces the script for requests that arrive from now on.
func (s *Server) SetScript(sc Script) { s.Configure(func(c *Config) { c.Script = sc }) }

// SetSecret replaces the signing secret for requests that arrive from now
// on (as if the user switched to another AWS account).
func (s *Server) SetSecret(secret []byte) { s.Configure(func(c *Config) { c.Secret = secret }) }

// SetEventDelay replaces the delay between events.
func (s *Server) SetEventDelay(d time.Duration) { s.Configure(func(c *Config) { c.EventDelay = d }) }

// route splits "/model/<url-escaped id>/<operation>".
func route(escapedPath string) (modelID, op string, ok bool) {
	rest, found := strings.CutPrefix(escapedPath, "/model/")
	if !found {
		return "", "", false
	}
	i := strings.LastIndex(rest, "/")
	if i <= 0 {
		return "", "", false
	}
	id, err := url.PathUnescape(rest[:i])
	return id, rest[i+1:], err == nil
}

// authorize checks the Authorization header: a Bedrock API key (Bearer) or
// an AWS SigV4 signature.
func (cfg Config) authorize(h http.Header) *APIError {
	auth := h.Get("Authorization")
	denied := &APIError{Status: http.StatusForbidden, Type: "UnrecognizedClientException", Message: TextInvalidToken}
	switch {
	case strings.HasPrefix(auth, "Bearer "):
		if cfg.BearerToken != "" && strings.TrimPrefix(auth, "Bearer ") != cfg.BearerToken {
			return denied
		}
	case strings.HasPrefix(auth, "AWS4-HMAC-SHA256 "):
		_, cred, _ := strings.Cut(auth, "Credential=")
		key, _, _ := strings.Cut(cred, "/")
		if cfg.AccessKeyID != "" && key != cfg.AccessKeyID {
			return denied
		}
	default:
		return &APIError{Status: http.StatusForbidden, Type: "MissingAuthenticationTokenException", Message: "Missing Authentication Token"}
	}
	return nil
}

func (s *Server) handle(w http.ResponseWriter, hr *http.Request, r *Request, cfg Config) {
	modelID, op, ok := route(hr.URL.EscapedPath())
	stream := op == "converse-stream"
	if hr.Method != http.MethodPost || !ok || (!stream && op != "converse") {
		s.reject(hr.Context(), w, r, &APIError{Status: http.StatusNotFound, Type: "UnknownOperationException", Message: "Unknown operation"})
		return
	}
	if e := cfg.authorize(hr.Header); e != nil {
		s.reject(hr.Context(), w, r, e)
		return
	}
	parsed, err := ParseRequest(modelID, r.Body)
	if err != nil {
		s.reject(hr.Context(), w, r, invalid("%s", err.Error()))
		return
	}
	s.Update(r, func(r *Request) {
		r.Parsed = parsed
		r.Chat = parsed.HasTools()
	})
	if !cfg.NoValidate {
		if e := (Validator{Secret: cfg.Secret}).Validate(parsed); e != nil {
			s.reject(hr.Context(), w, r, e)
			return
		}
	}
	turn := cfg.Script(r)
	if turn.Error != nil {
		s.reject(hr.Context(), w, r, turn.Error)
		return
	}
	s.Accept(hr.Context(), r, turn)
	blocks, stop := converse.Build(turn.Blocks, turn.StopReason, cfg.Secret)
	if !stream {
		s.answerJSON(w, r, blocks, stop)
		return
	}
	s.stream(hr.Context(), w, r, blocks, stop, turn, cfg)
}

func (s *Server) reject(ctx context.Context, w http.ResponseWriter, r *Request, e *APIError) {
	s.Reject(ctx, w, r, e.Message, e.write)
}

// converse is Converse's naming of Claude's blocks.
var converse = mockanthropic.Blocks{Thinking: "reasoning", Redacted: "redacted",
	ToolID: func() string { return "tooluse_" + mockstream.NewID("")[2:24] }}

func usage(r *Request) map[string]int {
	in := len(r.Body)/4 + 1
	return map[string]int{"inputTokens": in, "outputTokens": 10, "totalTokens": in + 10}
}

func (s *Server) answerJSON(w http.ResponseWriter, r *Request, blocks []mockanthropic.Built, stop string) {
	content := []map[string]any{}
	for _, b := range blocks {
		switch b.Spec.Type {
		case "reasoning":
			rt := map[string]any{"text": b.Spec.Text}
			if b.Signature != "" {
				rt["signature"] = b.Signature
			}
			content = append(content, map[string]any{"reasoningContent": map[string]any{"reasoningText": rt}})
		case "redacted":
			content = append(content, map[string]any{"reasoningContent": map[string]any{"redactedContent": b.Data}})
		case "text":
			content = append(content, map[string]any{"text": b.Spec.Text})
		case "tool_use":
			content = append(content, map[string]any{"toolUse": map[string]any{"toolUseId": b.ID, "name": b.Spec.ToolName, "input": json.RawMessage(b.InputJSON)}})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-amzn-RequestId", mockstream.NewID(""))
	_ = json.NewEncoder(w).Encode(map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": content}},
		"stopReason": stop, "usage": usage(r), "metrics": map[string]int{"latencyMs": 1},
	})
	s.Answered(r)
}

// padding is the "p" field Bedrock adds to every event (and clients drop).
const padding = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123"

func (s *Server) stream(ctx context.Context, w http.ResponseWriter, r *Request, blocks []mockanthropic.Built, stop string, turn Turn, cfg Config) {
	w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	w.Header().Set("x-amzn-RequestId", mockstream.NewID(""))
	w.WriteHeader(http.StatusOK)
	out := s.Stream(ctx, w, r, mockstream.Delay(cfg.EventDelay, turn.EventDelay))
	enc := eventstream.NewEncoder()
	send := func(event string, payload map[string]any) {
		payload["p"] = padding[:len(event)%len(padding)+8]
		j, _ := json.Marshal(payload)
		var msg eventstream.Message
		msg.Headers.Set(":event-type", eventstream.StringValue(event))
		msg.Headers.Set(":content-type", eventstream.StringValue("application/json"))
		msg.Headers.Set(":message-type", eventstream.StringValue("event"))
		msg.Payload = j
		var buf bytes.Buffer
		if err := enc.Encode(&buf, msg); err != nil {
			panic(err) // only on oversized messages, which the mock never makes
		}
		out.Frame(buf.Bytes())
	}
	delta := func(i int, d map[string]any) {
		send("contentBlockDelta", map[string]any{"contentBlockIndex": i, "delta": d})
	}
	send("messageStart", map[string]any{"role": "assistant"})
	out.Reach(StageMessageStart)
	for i, b := range blocks {
		switch b.Spec.Type {
		case "reasoning":
			for k, c := range mockstream.Chunks(b.Spec.Text, 24) {
				delta(i, map[string]any{"reasoningContent": map[string]any{"text": c}})
				if k == 0 {
					out.Reach(StageReasoningDelta)
				}
			}
			if b.Signature != "" {
				delta(i, map[string]any{"reasoningContent": map[string]any{"signature": b.Signature}})
			}
			send("contentBlockStop", map[string]any{"contentBlockIndex": i})
			out.Reach(StageReasoningDone)
		case "redacted":
			delta(i, map[string]any{"reasoningContent": map[string]any{"redactedContent": b.Data}})
			send("contentBlockStop", map[string]any{"contentBlockIndex": i})
			out.Reach(StageReasoningDone)
		case "text":
			for k, c := range mockstream.Chunks(b.Spec.Text, 16) {
				delta(i, map[string]any{"text": c})
				if k == 0 {
					out.Reach(StageTextDelta)
				}
			}
			send("contentBlockStop", map[string]any{"contentBlockIndex": i})
			out.Reach(StageTextDone)
		case "tool_use":
			send("contentBlockStart", map[string]any{"contentBlockIndex": i,
				"start": map[string]any{"toolUse": map[string]any{"toolUseId": b.ID, "name": b.Spec.ToolName}}})
			for _, c := range mockstream.Chunks(b.InputJSON, 16) {
				delta(i, map[string]any{"toolUse": map[string]any{"input": c}})
			}
			send("contentBlockStop", map[string]any{"contentBlockIndex": i})
			out.Reach(StageToolUse)
		}
	}
	send("messageStop", map[string]any{"stopReason": stop})
	out.Reach(StageMessageStop)
	send("metadata", map[string]any{"usage": usage(r), "metrics": map[string]int{"latencyMs": 1}})
	out.Reach(StageDone)
}
