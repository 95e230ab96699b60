package mockgemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// GenerateContentRequest is the part of a generateContent request body the
// mock reads. Model comes from the URL path, not the body.
type GenerateContentRequest struct {
	Model             string            `json:"-"`
	Contents          []Content         `json:"contents"`
	SystemInstruction *Content          `json:"systemInstruction,omitempty"`
	Tools             []Tool            `json:"tools,omitempty"`
	ToolConfig        json.RawMessage   `json:"toolConfig,omitempty"`
	GenerationConfig  *GenerationConfig `json:"generationConfig,omitempty"`
}

// Tool is one entry of "tools".
type Tool struct {
	FunctionDeclarations []FunctionDeclaration `json:"functionDeclarations,omitempty"`
}

// FunctionDeclaration declares one function the model may call.
type FunctionDeclaration struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// GenerationConfig is the request's "generationConfig".
type GenerationConfig struct {
	MaxOutputTokens int             `json:"maxOutputTokens,omitempty"`
	ThinkingConfig  *ThinkingConfig `json:"thinkingConfig,omitempty"`
}

// ThinkingConfig is "generationConfig.thinkingConfig".
type ThinkingConfig struct {
	IncludeThoughts bool   `json:"includeThoughts,omitempty"`
	ThinkingBudget  *int   `json:"thinkingBudget,omitempty"`
	ThinkingLevel   string `json:"thinkingLevel,omitempty"`
}

// Content is one entry of "contents": a user or model turn.
type Content struct {
	Role  string `json:"role"`
	Parts []Part `json:"parts"`
}

// Part is one part of a content. Exactly one of Text, FunctionCall,
// FunctionResponse, InlineData or FileData is set.
type Part struct {
	Text             *string           `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
	FunctionCall     *FunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *FunctionResponse `json:"functionResponse,omitempty"`
	InlineData       json.RawMessage   `json:"inlineData,omitempty"`
	FileData         json.RawMessage   `json:"fileData,omitempty"`
}

// FunctionCall is a functionCall part's body.
type FunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// FunctionResponse is a functionResponse part's body.
type FunctionResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response,omitempty"`
}

// Text returns the text the response carries: its "content" string (what
// @ai-sdk/google sends), or the whole response as JSON.
func (f *FunctionResponse) Text() string {
	var r struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(f.Response, &r) == nil && len(r.Content) > 0 {
		var s string
		if json.Unmarshal(r.Content, &s) == nil {
			return s
		}
		return string(r.Content)
	}
	return string(bytes.TrimSpace(f.Response))
}

// ParseRequest decodes a generateContent request body for model.
func ParseRequest(model string, body []byte) (*GenerateContentRequest, error) {
	var r GenerateContentRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("decode request: %w", err)
	}
	r.Model = model
	return &r, nil
}

// ThinkingEnabled reports whether the request asks for thought summaries.
func (r *GenerateContentRequest) ThinkingEnabled() bool {
	return r.GenerationConfig != nil && r.GenerationConfig.ThinkingConfig != nil && r.GenerationConfig.ThinkingConfig.IncludeThoughts
}

// HasFunctions reports whether the request declares functions (OpenCode's
// agent requests do; its title requests do not).
func (r *GenerateContentRequest) HasFunctions() bool {
	for _, t := range r.Tools {
		if len(t.FunctionDeclarations) > 0 {
			return true
		}
	}
	return false
}

// LastUserText returns the text parts of the last user content that has
// any text, joined by newlines.
func (r *GenerateContentRequest) LastUserText() string {
	for i := len(r.Contents) - 1; i >= 0; i-- {
		c := r.Contents[i]
		if c.Role != "user" {
			continue
		}
		var out []string
		for _, p := range c.Parts {
			if p.Text != nil {
				out = append(out, *p.Text)
			}
		}
		if len(out) > 0 {
			return strings.Join(out, "\n")
		}
	}
	return ""
}

// PendingResponses returns the functionResponse parts of the final content
// when it is a user turn answering function calls (the model is in a tool
// loop).
func (r *GenerateContentRequest) PendingResponses() []*FunctionResponse {
	if len(r.Contents) == 0 {
		return nil
	}
	last := r.Contents[len(r.Contents)-1]
	if last.Role != "user" {
		return nil
	}
	var out []*FunctionResponse
	for _, p := range last.Parts {
		if p.FunctionResponse != nil {
			out = append(out, p.FunctionResponse)
		}
	}
	return out
}

func (c Content) calls() []Part {
	var out []Part
	for _, p := range c.Parts {
		if p.FunctionCall != nil {
			out = append(out, p)
		}
	}
	return out
}

func (c Content) responses() int {
	n := 0
	for _, p := range c.Parts {
		if p.FunctionResponse != nil {
			n++
		}
	}
	return n
}

// isPrompt reports whether c is a user turn that starts a new turn of the
// conversation: it has a part other than a function response.
func (c Content) isPrompt() bool {
	if c.Role != "user" {
		return false
	}
	for _, p := range c.Parts {
		if p.FunctionResponse == nil {
			return true
		}
	}
	return false
}

// inline returns an inlineData part's mime type and base64 data.
func (p Part) inline() (mime, data string, ok bool) {
	if len(p.InlineData) == 0 {
		return "", "", false
	}
	var d struct {
		MimeType string `json:"mimeType"`
		Data     string `json:"data"`
	}
	if json.Unmarshal(p.InlineData, &d) != nil {
		return "", "", false
	}
	return d.MimeType, d.Data, true
}

// Images lists the request's inline images' base64 data, in order.
func (r *GenerateContentRequest) Images() []string {
	if r == nil {
		return nil
	}
	var out []string
	for _, c := range r.Contents {
		for _, p := range c.Parts {
			if mime, data, ok := p.inline(); ok && strings.HasPrefix(mime, "image/") {
				out = append(out, data)
			}
		}
	}
	return out
}
