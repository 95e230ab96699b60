package mockanthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// MessagesRequest is the part of a Messages API request body the mock reads.
type MessagesRequest struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	Thinking  *ThinkingConfig `json:"thinking,omitempty"`
	System    json.RawMessage `json:"system,omitempty"`
	Messages  []Message       `json:"messages"`
	Tools     []Tool          `json:"tools,omitempty"`
	Stream    bool            `json:"stream"`
}

// ThinkingConfig is the request's "thinking" object.
type ThinkingConfig struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitempty"`
}

// ThinkingEnabled reports whether the request turns extended thinking on.
func (r *MessagesRequest) ThinkingEnabled() bool {
	return r.Thinking != nil && (r.Thinking.Type == "enabled" || r.Thinking.Type == "adaptive")
}

// Tool is one entry of the request's "tools".
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// Message is one entry of "messages". Content given as a plain string is
// turned into one text block (an empty string into no block at all).
type Message struct {
	Role    string  `json:"role"`
	Content []Block `json:"-"`
}

// UnmarshalJSON accepts both content forms of the API.
func (m *Message) UnmarshalJSON(b []byte) error {
	var raw struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	m.Role = raw.Role
	c := bytes.TrimSpace(raw.Content)
	if len(c) > 0 && c[0] == '"' {
		var s string
		if err := json.Unmarshal(c, &s); err != nil {
			return err
		}
		if s != "" {
			m.Content = []Block{{Type: "text", Text: s}}
		}
		return nil
	}
	if len(c) == 0 || string(c) == "null" {
		return nil
	}
	return json.Unmarshal(c, &m.Content)
}

// MarshalJSON writes content as an array of blocks.
func (m Message) MarshalJSON() ([]byte, error) {
	content := m.Content
	if content == nil {
		content = []Block{}
	}
	return json.Marshal(struct {
		Role    string  `json:"role"`
		Content []Block `json:"content"`
	}{m.Role, content})
}

// Block is one content block.
type Block struct {
	Type string `json:"type"`

	Text string `json:"text,omitempty"`

	Thinking  string  `json:"thinking,omitempty"`
	Signature *string `json:"signature,omitempty"`
	Data      string  `json:"data,omitempty"` // redacted_thinking

	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`

	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`

	Source *ImageSource `json:"source,omitempty"` // image
}

// ImageSource is an image block's source: base64 data and its media type.
type ImageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// oversizedImage returns the index and base64 size of the first image in a
// tool_result's content whose base64 is over ImageBase64Max, or -1.
func (b Block) oversizedImage() (int, int) {
	var inner []Block
	if json.Unmarshal(b.Content, &inner) != nil {
		return -1, 0 // a string, or nothing
	}
	for k, c := range inner {
		if c.Type == "image" && c.Source != nil && c.Source.Type == "base64" && len(c.Source.Data) > ImageBase64Max {
			return k, len(c.Source.Data)
		}
	}
	return -1, 0
}

// ToolResultText returns the text of a tool_result block's content.
func (b Block) ToolResultText() string {
	c := bytes.TrimSpace(b.Content)
	if len(c) == 0 {
		return ""
	}
	if c[0] == '"' {
		var s string
		_ = json.Unmarshal(c, &s)
		return s
	}
	var parts []Block
	if json.Unmarshal(c, &parts) != nil {
		return string(c)
	}
	var out []string
	for _, p := range parts {
		if p.Type == "text" {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n")
}

// ParseRequest decodes a Messages API request body.
func ParseRequest(body []byte) (*MessagesRequest, error) {
	var r MessagesRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("decode request: %w", err)
	}
	return &r, nil
}

// LastUserText returns the text blocks of the last user message that has
// any text, joined by newlines.
func (r *MessagesRequest) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role != "user" {
			continue
		}
		var out []string
		for _, b := range m.Content {
			if b.Type == "text" {
				out = append(out, b.Text)
			}
		}
		if len(out) > 0 {
			return strings.Join(out, "\n")
		}
	}
	return ""
}

// PendingToolResults returns the tool_result blocks of the final message when
// it is a user message answering tool calls (the model is in a tool loop).
func (r *MessagesRequest) PendingToolResults() []Block {
	if len(r.Messages) == 0 {
		return nil
	}
	last := r.Messages[len(r.Messages)-1]
	if last.Role != "user" {
		return nil
	}
	var out []Block
	for _, b := range last.Content {
		if b.Type == "tool_result" {
			out = append(out, b)
		}
	}
	return out
}
