package mockopenai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/mockstream"
)

// ResponsesRequest is the part of a Responses API request body the mock
// reads.
type ResponsesRequest struct {
	Model              string            `json:"model"`
	Instructions       string            `json:"instructions,omitempty"`
	Input              []InputItem       `json:"input"`
	Store              *bool             `json:"store,omitempty"`
	Include            []string          `json:"include,omitempty"`
	Reasoning          *ReasoningParam   `json:"reasoning,omitempty"`
	Tools              []json.RawMessage `json:"tools,omitempty"`
	Stream             bool              `json:"stream"`
	PreviousResponseID string            `json:"previous_response_id,omitempty"`
}

// ReasoningParam is the request's "reasoning" object.
type ReasoningParam struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary,omitempty"`
}

// Stored reports whether the response will be stored: store defaults to
// true in the API.
func (r *ResponsesRequest) Stored() bool { return r.Store == nil || *r.Store }

// IncludesEncrypted reports whether the request asks for encrypted
// reasoning content.
func (r *ResponsesRequest) IncludesEncrypted() bool {
	return slices.Contains(r.Include, "reasoning.encrypted_content")
}

// InputItem is one entry of "input".
type InputItem struct {
	// Type is "message" (or empty, with a Role), "reasoning",
	// "function_call", "function_call_output" or "item_reference".
	Type    string          `json:"type,omitempty"`
	Role    string          `json:"role,omitempty"`
	Content json.RawMessage `json:"content,omitempty"`
	// ID is nil when the field is absent (or null).
	ID               *string         `json:"id,omitempty"`
	EncryptedContent *string         `json:"encrypted_content,omitempty"`
	Summary          []SummaryPart   `json:"summary,omitempty"`
	CallID           string          `json:"call_id,omitempty"`
	Name             string          `json:"name,omitempty"`
	Arguments        string          `json:"arguments,omitempty"`
	Output           json.RawMessage `json:"output,omitempty"`
}

// SummaryPart is one entry of a reasoning item's summary.
type SummaryPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Kind is the item's type, "message" for a role message without one.
func (it InputItem) Kind() string {
	if it.Type == "" && it.Role != "" {
		return "message"
	}
	return it.Type
}

// IDValue is the item's id, "" when absent.
func (it InputItem) IDValue() string {
	if it.ID == nil {
		return ""
	}
	return *it.ID
}

// Text returns a message's text (content string or its text parts) or a
// function call output's output.
func (it InputItem) Text() string {
	c := it.Content
	if it.Kind() == "function_call_output" {
		c = it.Output
	}
	return contentText(c, func(typ string) bool { return strings.HasSuffix(typ, "text") })
}

// ParseResponses decodes a Responses API request body.
func ParseResponses(body []byte) (*ResponsesRequest, error) {
	var r ResponsesRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("decode request: %w", err)
	}
	return &r, nil
}

func (r *ResponsesRequest) conversation() Conversation {
	c := Conversation{Reasoning: r.Reasoning != nil && r.Reasoning.Effort != "none"}
	for i := len(r.Input) - 1; i >= 0; i-- {
		if it := r.Input[i]; it.Kind() == "message" && it.Role == "user" {
			c.Prompt = it.Text()
			break
		}
	}
	for i := len(r.Input) - 1; i >= 0 && r.Input[i].Kind() == "function_call_output"; i-- {
		c.ToolResults = append([]string{r.Input[i].Text()}, c.ToolResults...)
	}
	return c
}

// Item is an output item the server issued.
type Item struct {
	ID     string
	Type   string // "reasoning", "message" or "function_call"
	CallID string // function_call
	// Reasoning is the id of the reasoning item this item followed in its
	// response ("" when none).
	Reasoning string
	// Encrypted is a reasoning item's encrypted content.
	Encrypted string
	Account   string // the API key it was issued to
	Model     string
	// Stored is true when the response was made with store: true, so the
	// item can be referenced by id later.
	Stored bool
}

// registry remembers every item the server issued.
type registry struct {
	mu   sync.Mutex
	byID map[string]Item
}

func newRegistry() *registry { return &registry{byID: map[string]Item{}} }

func (g *registry) add(items []Item) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, it := range items {
		g.byID[it.ID] = it
	}
}

func (g *registry) get(id string) (Item, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	it, ok := g.byID[id]
	return it, ok
}

// Issued returns the item the server issued with that id.
func (s *Server) Issued(id string) (Item, bool) { return s.items.get(id) }

// ResponsesValidator checks a Responses API request against the API's rules
// on input items.
type ResponsesValidator struct {
	// Secret verifies encrypted content (DefaultSecret when nil).
	Secret []byte
	// Account is the request's API key.
	Account string
	// Lookup finds an item the server issued (nil: none known).
	Lookup func(id string) (Item, bool)
}

// resolved is what one input item turned out to be.
type resolved struct {
	kind   string // message, reasoning, function_call, function_call_output
	role   string
	id     string // known id (for reasoning also from the encrypted content)
	callID string
}

func (x resolved) output() bool {
	return x.kind == "function_call" || (x.kind == "message" && x.role == "assistant")
}

// Validate returns the error the API would answer r with, or nil. Checks run
// in a fixed order (the image limits, then ids, references and encrypted
// content item by item, then reasoning pairing, then function call
// pairing) and the first violation wins. Where the image check goes in
// the live API's order is not known.
func (v ResponsesValidator) Validate(r *ResponsesRequest) *APIError {
	secret := v.Secret
	if secret == nil {
		secret = DefaultSecret
	}
	lookup := v.Lookup
	if lookup == nil {
		lookup = func(string) (Item, bool) { return Item{}, false }
	}
	held := func(id string) (Item, bool) {
		it, ok := lookup(id)
		return it, ok && it.Stored && it.Account == v.Account
	}
	if e := checkImages(r); e != nil {
		return e
	}
	in := make([]resolved, len(r.Input))
	for n, it := range r.Input {
		if it.ID != nil && *it.ID == "" {
			return invalid(OpenAI, str(fmt.Sprintf("input[%d].id", n)), "%s", MsgEmptyID(n))
		}
		x := resolved{kind: it.Kind(), role: it.Role, id: it.IDValue(), callID: it.CallID}
		switch x.kind {
		case "item_reference":
			ref, ok := held(x.id)
			if !ok {
				return itemNotFound(x.id)
			}
			x.kind, x.callID = ref.Type, ref.CallID
			if ref.Type == "message" {
				x.role = "assistant"
			}
		case "reasoning":
			if it.EncryptedContent == nil {
				if x.id == "" {
					return invalid(OpenAI, str(fmt.Sprintf("input[%d].encrypted_content", n)),
						"Missing required parameter: 'input[%d].encrypted_content'.", n)
				}
				if _, ok := held(x.id); !ok {
					return itemNotFound(x.id)
				}
				break
			}
			sealed, ok, _ := Unseal(secret, *it.EncryptedContent)
			if x.id == "" && ok {
				x.id = sealed.ID
			}
			if !Verify(secret, *it.EncryptedContent, v.Account, r.Model) || (it.ID != nil && sealed.ID != *it.ID) {
				e := invalid(OpenAI, nil, "%s", MsgEncryptedNotVerified(x.id))
				e.Code = str("invalid_encrypted_content")
				return e
			}
		}
		in[n] = x
	}
	// A reasoning item is followed by the item it produced (several
	// reasoning entries of one item in a row count as one).
	for n := 0; n < len(in); n++ {
		x := in[n]
		if x.kind != "reasoning" {
			continue
		}
		k := n + 1
		for k < len(in) && in[k].kind == "reasoning" && x.id != "" && in[k].id == x.id {
			k++
		}
		if k >= len(in) || !in[k].output() {
			return invalid(OpenAI, str("input"), "%s", MsgReasoningWithoutFollowing(x.id))
		}
		n = k - 1
	}
	// An output item the server issued after a reasoning item comes with it.
	for n, x := range in {
		if !x.output() || x.id == "" {
			continue
		}
		issued, ok := lookup(x.id)
		if !ok || issued.Reasoning == "" || issued.Account != v.Account {
			continue
		}
		found := false
		for _, p := range in[:n] {
			if p.kind == "reasoning" && p.id == issued.Reasoning {
				found = true
				break
			}
		}
		if !found {
			return invalid(OpenAI, str("input"), "%s", MsgWithoutReasoning(x.id, x.kind, issued.Reasoning))
		}
	}
	// Function calls and their outputs.
	for n, x := range in {
		switch x.kind {
		case "function_call":
			if !slices.ContainsFunc(in[n+1:], func(o resolved) bool { return o.kind == "function_call_output" && o.callID == x.callID }) {
				return invalid(OpenAI, str("input"), "%s", MsgNoToolOutput(x.callID))
			}
		case "function_call_output":
			if !slices.ContainsFunc(in[:n], func(o resolved) bool { return o.kind == "function_call" && o.callID == x.callID }) {
				return invalid(OpenAI, str("input"), "%s", MsgNoToolCall(x.callID))
			}
		}
	}
	return nil
}

func itemNotFound(id string) *APIError {
	e := invalid(OpenAI, str("input"), "%s", MsgItemNotFound(id))
	e.Status = http.StatusNotFound
	return e
}

func (s *Server) handleResponses(ctx context.Context, w http.ResponseWriter, r *Request, p *Parsed, cfg Config) {
	parsed, err := ParseResponses(r.Body)
	if err != nil {
		s.reject(ctx, w, r, invalid(OpenAI, nil, "%s", textBadJSON))
		return
	}
	s.base.Update(r, func(r *Request) {
		p.Responses = parsed
		r.Chat = len(parsed.Tools) > 0
	})
	if cfg.MaxRequestBytes > 0 && len(r.Body) > cfg.MaxRequestBytes {
		s.reject(ctx, w, r, edgeTooLarge(OpenAI, cfg.MaxRequestBytes))
		return
	}
	if !cfg.NoValidate {
		v := ResponsesValidator{Secret: cfg.Secret, Account: p.Account, Lookup: s.items.get}
		if e := v.Validate(parsed); e != nil {
			s.reject(ctx, w, r, e)
			return
		}
	}
	if n := len(parsed.Images()); cfg.MaxConsoleImages > 0 && n > cfg.MaxConsoleImages {
		s.reject(ctx, w, r, invalid(OpenAI, nil, "%s", MsgTooManyImagesConsole(n, cfg.MaxConsoleImages)))
		return
	}
	if n := PromptTokens(r.Body); cfg.MaxPromptTokens > 0 && n > cfg.MaxPromptTokens {
		e := contextLengthExceeded(OpenAI, "input", TextContextWindow)
		if !parsed.Stream {
			s.reject(ctx, w, r, e)
			return
		}
		s.base.Update(r, func(r *Request) { r.Turn.Status = http.StatusOK })
		s.base.Reject(ctx, w, r, e.Message, func(w http.ResponseWriter) { s.streamError(ctx, w, r, e) })
		return
	}
	turn := cfg.Script(r)
	if turn.Error != nil {
		if turn.Error.Dialect == "" {
			turn.Error.Dialect = OpenAI
		}
		s.reject(ctx, w, r, turn.Error)
		return
	}
	items := s.issue(p, turn, cfg)
	s.base.Accept(ctx, r, Answer{Turn: turn, Output: items})
	if !parsed.Stream {
		s.responsesJSON(w, r, turn, items)
		return
	}
	s.responsesStream(s.newSSE(ctx, w, r, mockstream.Delay(cfg.EventDelay, turn.EventDelay)), r, turn, items)
}

// issue makes the output items of a turn (ids, encrypted content) and
// remembers them: the server has produced them whether or not the client
// reads the whole stream.
func (s *Server) issue(p *Parsed, turn Turn, cfg Config) []Item {
	ids := callIDs(turn)
	var out []Item
	reasoning := ""
	for i, b := range turn.Blocks {
		it := Item{Account: p.Account, Model: p.Responses.Model, Stored: p.Responses.Stored()}
		switch b.Type {
		case BlockReasoning:
			it.Type, it.ID = "reasoning", newID("rs_")
			if b.Encrypted != "" {
				it.Encrypted = b.Encrypted
			} else if p.Responses.IncludesEncrypted() {
				it.Encrypted = Seal(cfg.Secret, it.ID, p.Account, p.Responses.Model)
			}
			reasoning = it.ID
		case BlockText:
			it.Type, it.ID, it.Reasoning = "message", newID("msg_"), reasoning
		case BlockToolCall:
			it.Type, it.ID, it.CallID, it.Reasoning = "function_call", newID("fc_"), ids[i], reasoning
		}
		out = append(out, it)
	}
	s.items.add(out)
	return out
}

// outputJSON is an issued item as the API shows it once done.
func outputJSON(it Item, b Block) map[string]any {
	switch it.Type {
	case "reasoning":
		m := map[string]any{"id": it.ID, "type": "reasoning", "summary": []any{map[string]any{"type": "summary_text", "text": b.Text}}}
		if it.Encrypted != "" {
			m["encrypted_content"] = it.Encrypted
		}
		return m
	case "message":
		return map[string]any{"id": it.ID, "type": "message", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": b.Text, "annotations": []any{}, "logprobs": []any{}}}}
	default:
		return map[string]any{"id": it.ID, "type": "function_call", "status": "completed", "arguments": toolArgs(b),
			"call_id": it.CallID, "name": b.ToolName}
	}
}

func responsesUsage(r *Request, blocks int) map[string]any {
	in := len(r.Body)/4 + 1
	out := 10 + 5*blocks
	return map[string]any{"input_tokens": in, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": out, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": in + out}
}

func responseObject(id string, created int64, r *Request, status string) map[string]any {
	req := r.Parsed.Responses
	m := map[string]any{"id": id, "object": "response", "created_at": created, "status": status, "model": req.Model,
		"output": []any{}, "error": nil, "incomplete_details": nil, "store": req.Stored(), "usage": nil}
	if req.Reasoning != nil {
		m["reasoning"] = map[string]any{"effort": req.Reasoning.Effort, "summary": req.Reasoning.Summary}
	}
	return m
}

func (s *Server) responsesJSON(w http.ResponseWriter, r *Request, turn Turn, items []Item) {
	resp := responseObject(newID("resp_"), time.Now().Unix(), r, "completed")
	var out []any
	for i, it := range items {
		out = append(out, outputJSON(it, turn.Blocks[i]))
	}
	resp["output"] = out
	resp["usage"] = responsesUsage(r, len(items))
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
	s.base.Answered(r)
}

func (s *Server) responsesStream(e sse, r *Request, turn Turn, items []Item) {
	seq := 0
	ev := func(typ string, data map[string]any) {
		data["type"] = typ
		data["sequence_number"] = seq
		seq++
		e.send(typ, data)
	}
	respID := newID("resp_")
	created := time.Now().Unix()
	ev("response.created", map[string]any{"response": responseObject(respID, created, r, "in_progress")})
	e.Reach(StageCreated)
	ev("response.in_progress", map[string]any{"response": responseObject(respID, created, r, "in_progress")})
	var done []any
	for i, it := range items {
		b := turn.Blocks[i]
		switch it.Type {
		case "reasoning":
			ev("response.output_item.added", map[string]any{"output_index": i,
				"item": map[string]any{"id": it.ID, "type": "reasoning", "summary": []any{}}})
			part := func(text string) map[string]any {
				return map[string]any{"item_id": it.ID, "output_index": i, "summary_index": 0,
					"part": map[string]any{"type": "summary_text", "text": text}}
			}
			ev("response.reasoning_summary_part.added", part(""))
			for k, c := range mockstream.Chunks(b.Text, 24) {
				ev("response.reasoning_summary_text.delta", map[string]any{"item_id": it.ID, "output_index": i, "summary_index": 0, "delta": c})
				if k == 0 {
					e.Reach(StageReasoningDelta)
				}
			}
			ev("response.reasoning_summary_text.done", map[string]any{"item_id": it.ID, "output_index": i, "summary_index": 0, "text": b.Text})
			ev("response.reasoning_summary_part.done", part(b.Text))
			ev("response.output_item.done", map[string]any{"output_index": i, "item": outputJSON(it, b)})
			e.Reach(StageReasoningDone)
		case "message":
			ev("response.output_item.added", map[string]any{"output_index": i,
				"item": map[string]any{"id": it.ID, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
			part := func(text string) map[string]any {
				return map[string]any{"item_id": it.ID, "output_index": i, "content_index": 0,
					"part": map[string]any{"type": "output_text", "text": text, "annotations": []any{}, "logprobs": []any{}}}
			}
			ev("response.content_part.added", part(""))
			e.Reach(StageTextStart)
			for k, c := range mockstream.Chunks(b.Text, 16) {
				ev("response.output_text.delta", map[string]any{"item_id": it.ID, "output_index": i, "content_index": 0, "delta": c, "logprobs": []any{}})
				if k == 0 {
					e.Reach(StageTextDelta)
				}
			}
			ev("response.output_text.done", map[string]any{"item_id": it.ID, "output_index": i, "content_index": 0, "text": b.Text, "logprobs": []any{}})
			ev("response.content_part.done", part(b.Text))
			ev("response.output_item.done", map[string]any{"output_index": i, "item": outputJSON(it, b)})
			e.Reach(StageTextDone)
		case "function_call":
			args := toolArgs(b)
			ev("response.output_item.added", map[string]any{"output_index": i,
				"item": map[string]any{"id": it.ID, "type": "function_call", "status": "in_progress", "arguments": "", "call_id": it.CallID, "name": b.ToolName}})
			if turn.CutOff && i == len(items)-1 {
				args = args[:len(args)/2]
			}
			for _, c := range mockstream.Chunks(args, 16) {
				ev("response.function_call_arguments.delta", map[string]any{"item_id": it.ID, "output_index": i, "delta": c})
			}
			if turn.CutOff && i == len(items)-1 {
				final := responseObject(respID, created, r, "incomplete")
				final["incomplete_details"] = map[string]any{"reason": "max_output_tokens"}
				final["output"] = done
				final["usage"] = responsesUsage(r, len(items))
				ev("response.incomplete", map[string]any{"response": final})
				e.Reach(StageDone)
				return
			}
			ev("response.function_call_arguments.done", map[string]any{"item_id": it.ID, "output_index": i, "arguments": args})
			ev("response.output_item.done", map[string]any{"output_index": i, "item": outputJSON(it, b)})
			e.Reach(StageToolCall)
		}
		done = append(done, outputJSON(it, b))
	}
	e.Reach(StageFinish)
	final := responseObject(respID, created, r, "completed")
	final["output"] = done
	final["usage"] = responsesUsage(r, len(items))
	ev("response.completed", map[string]any{"response": final})
	e.Reach(StageDone)
}

// streamError answers a streamed request the way the Responses API
// refuses one over the context window: HTTP 200, response.created and
// response.in_progress, then an error event carrying the error
// (sequence_number 2), as OpenCode stores it (anomalyco/opencode#6071:
// {"type":"error","sequence_number":2,"error":{"type":"invalid_request_error",
// "code":"context_length_exceeded","message":…,"param":"input"}}).
func (s *Server) streamError(ctx context.Context, w http.ResponseWriter, r *Request, e *APIError) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("x-request-id", newID("req_"))
	w.WriteHeader(http.StatusOK)
	out := sse{s.base.Stream(ctx, w, r, 0)}
	resp := responseObject(newID("resp_"), time.Now().Unix(), r, "in_progress")
	out.send("response.created", map[string]any{"type": "response.created", "sequence_number": 0, "response": resp})
	out.send("response.in_progress", map[string]any{"type": "response.in_progress", "sequence_number": 1, "response": resp})
	out.send("error", map[string]any{"type": "error", "sequence_number": 2,
		"error": map[string]any{"type": e.Type, "code": e.Code, "message": e.Message, "param": e.Param}})
}
