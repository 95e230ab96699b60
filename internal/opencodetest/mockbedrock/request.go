package mockbedrock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// ConverseRequest is the part of a Converse / ConverseStream request body
// the mock reads. ModelID comes from the URL path, not the body.
type ConverseRequest struct {
	ModelID                      string                     `json:"-"`
	Messages                     []Message                  `json:"messages"`
	System                       []json.RawMessage          `json:"system,omitempty"`
	InferenceConfig              *InferenceConfig           `json:"inferenceConfig,omitempty"`
	ToolConfig                   *ToolConfig                `json:"toolConfig,omitempty"`
	AdditionalModelRequestFields map[string]json.RawMessage `json:"additionalModelRequestFields,omitempty"`
}

// InferenceConfig is the request's "inferenceConfig".
type InferenceConfig struct {
	MaxTokens int `json:"maxTokens,omitempty"`
}

// ToolConfig is the request's "toolConfig".
type ToolConfig struct {
	Tools      []ToolEntry     `json:"tools"`
	ToolChoice json.RawMessage `json:"toolChoice,omitempty"`
}

// ToolEntry is one entry of "toolConfig.tools".
type ToolEntry struct {
	ToolSpec *ToolSpec `json:"toolSpec,omitempty"`
}

// ToolSpec declares one tool.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
}

// Message is one entry of "messages".
type Message struct {
	Role    string         `json:"role"`
	Content []ContentBlock `json:"content"`
}

// ContentBlock is one block of a message; exactly one field is set.
type ContentBlock struct {
	Text             *string           `json:"text,omitempty"`
	ToolUse          *ToolUse          `json:"toolUse,omitempty"`
	ToolResult       *ToolResult       `json:"toolResult,omitempty"`
	ReasoningContent *ReasoningContent `json:"reasoningContent,omitempty"`
	CachePoint       json.RawMessage   `json:"cachePoint,omitempty"`
	Image            json.RawMessage   `json:"image,omitempty"`
	Document         json.RawMessage   `json:"document,omitempty"`
}

// ToolUse is a toolUse block.
type ToolUse struct {
	ToolUseID string          `json:"toolUseId"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

// ToolResult is a toolResult block.
type ToolResult struct {
	ToolUseID string              `json:"toolUseId"`
	Content   []ToolResultContent `json:"content"`
	// Status is "success", "error" or empty.
	Status string `json:"status,omitempty"`
}

// ToolResultContent is one block of a tool result.
type ToolResultContent struct {
	Text  *string         `json:"text,omitempty"`
	JSON  json.RawMessage `json:"json,omitempty"`
	Image json.RawMessage `json:"image,omitempty"`
}

// ReasoningContent is a reasoningContent block: reasoning text with its
// signature, or redacted reasoning.
type ReasoningContent struct {
	ReasoningText   *ReasoningText `json:"reasoningText,omitempty"`
	RedactedContent string         `json:"redactedContent,omitempty"`
}

// ReasoningText is reasoning the model produced and the signature it came
// with.
type ReasoningText struct {
	Text      string `json:"text"`
	Signature string `json:"signature,omitempty"`
}

// ParseRequest decodes a Converse request body for modelID.
func ParseRequest(modelID string, body []byte) (*ConverseRequest, error) {
	var r ConverseRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("decode request: %w", err)
	}
	r.ModelID = modelID
	return &r, nil
}

// IsClaude reports whether the model is an Anthropic model (Bedrock then
// also applies Anthropic's rules on thinking and tool pairing).
func (r *ConverseRequest) IsClaude() bool { return strings.Contains(r.ModelID, "anthropic.") }

// ThinkingEnabled reports whether additionalModelRequestFields turns
// Claude's extended thinking on ("thinking" or the older
// "reasoning_config", type "enabled" or "adaptive").
func (r *ConverseRequest) ThinkingEnabled() bool {
	for _, k := range []string{"thinking", "reasoning_config"} {
		var t struct {
			Type string `json:"type"`
		}
		if raw, ok := r.AdditionalModelRequestFields[k]; ok && json.Unmarshal(raw, &t) == nil && (t.Type == "enabled" || t.Type == "adaptive") {
			return true
		}
	}
	return false
}

// HasTools reports whether the request declares tools (OpenCode's agent
// requests do; its title requests do not).
func (r *ConverseRequest) HasTools() bool { return r.ToolConfig != nil && len(r.ToolConfig.Tools) > 0 }

// LastUserText returns the text blocks of the last user message that has
// any text, joined by newlines.
func (r *ConverseRequest) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role != "user" {
			continue
		}
		var out []string
		for _, b := range m.Content {
			if b.Text != nil {
				out = append(out, *b.Text)
			}
		}
		if len(out) > 0 {
			return strings.Join(out, "\n")
		}
	}
	return ""
}

// PendingToolResults returns the toolResult blocks of the final message
// when it is a user message answering tool calls.
func (r *ConverseRequest) PendingToolResults() []*ToolResult {
	if len(r.Messages) == 0 {
		return nil
	}
	last := r.Messages[len(r.Messages)-1]
	if last.Role != "user" {
		return nil
	}
	var out []*ToolResult
	for _, b := range last.Content {
		if b.ToolResult != nil {
			out = append(out, b.ToolResult)
		}
	}
	return out
}

// Text returns the tool result's text blocks (JSON blocks as JSON), joined
// by newlines.
func (t *ToolResult) Text() string {
	var out []string
	for _, c := range t.Content {
		switch {
		case c.Text != nil:
			out = append(out, *c.Text)
		case len(c.JSON) > 0:
			out = append(out, string(bytes.TrimSpace(c.JSON)))
		}
	}
	return strings.Join(out, "\n")
}
