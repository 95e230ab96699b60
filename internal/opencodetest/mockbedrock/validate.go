package mockbedrock

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/sessfix/sessfix/internal/opencodetest/mockstream"
)

// DefaultSecret signs reasoning when a Server has no Secret of its own.
var DefaultSecret = []byte("mockbedrock-default-secret")

// Sign returns the signature the mock issues for reasoning text. It is the
// scheme of internal/opencodetest/mockanthropic (Bedrock hands Claude's signatures
// through), under the Bedrock mock's own secret: reasoning signed by the
// Anthropic API, by another account or with edited text does not verify.
func Sign(secret []byte, text string) string { return mockanthropic.Sign(secret, text) }

// ValidSignature reports whether sig is the mock's signature of text.
func ValidSignature(secret []byte, text, sig string) bool {
	return mockanthropic.ValidSignature(secret, text, sig)
}

// APIError is an error answer of Bedrock Runtime: HTTP status, the
// x-amzn-ErrorType header and the {"message": ...} body of AWS's REST-JSON
// protocol.
type APIError struct {
	Status  int
	Type    string // e.g. ValidationException
	Message string
}

func (e *APIError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Type, e.Message) }

// Body is the JSON body Bedrock sends with the error.
func (e *APIError) Body() []byte {
	b, _ := json.Marshal(map[string]string{"message": e.Message})
	return b
}

// Header is the x-amzn-ErrorType header Bedrock sends with the error.
func (e *APIError) Header() string {
	return e.Type + ":http://internal.amazon.com/coral/com.amazon.bedrock/"
}

// write sends the error answer as Bedrock does.
func (e *APIError) write(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-amzn-RequestId", mockstream.NewID(""))
	w.Header().Set("x-amzn-ErrorType", e.Header())
	w.WriteHeader(e.Status)
	_, _ = w.Write(e.Body())
}

func invalid(format string, args ...any) *APIError {
	return &APIError{Status: http.StatusBadRequest, Type: "ValidationException", Message: fmt.Sprintf(format, args...)}
}

// The texts of Converse's own validation errors, as Bedrock words them.
// Where it names an index the Msg* helpers add it.
const (
	TextStartWithUser = "A conversation must start with a user message. Try again with a conversation that starts with a user message."
	TextAlternate     = "A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again."
	TextToolConfig    = "The toolConfig field must be defined when using toolUse and toolResult content blocks."
	TextInvalidToken  = "The security token included in the request is invalid."
)

// MsgBlankText is the error for a blank text block at messages.n.content.m.
func MsgBlankText(n, m int) string {
	return fmt.Sprintf("The text field in the ContentBlock object at messages.%d.content.%d is blank. Add text to the text field, and try again.", n, m)
}

// MsgEmptyContent is the error for a message with no content blocks.
func MsgEmptyContent(n int) string {
	return fmt.Sprintf("The content field in the Message object at messages.%d is empty. Add a ContentBlock object to the content field and try again.", n)
}

// MsgEmptyErrorResult is the error for a toolResult with status "error"
// and no content.
func MsgEmptyErrorResult(n, m int) string {
	return fmt.Sprintf("The content field at messages.%d.content.%d.toolResult cannot be empty when status value is error.", n, m)
}

// Validator checks a Converse request against Bedrock's rules on history
// and, for Claude models, Anthropic's (through the same validator as
// internal/opencodetest/mockanthropic, on the request as Bedrock hands it to Claude).
type Validator struct {
	// Secret verifies reasoning signatures (DefaultSecret when nil).
	Secret []byte
}

// Validate returns the error Bedrock would answer r with, or nil. Converse's
// checks (roles, empty content, blank text, error tool results, toolConfig)
// come first, then Anthropic's rules for Claude models; the first
// violation wins.
func (v Validator) Validate(r *ConverseRequest) *APIError {
	secret := v.Secret
	if secret == nil {
		secret = DefaultSecret
	}
	ms := r.Messages
	if len(ms) == 0 || ms[0].Role != "user" {
		return invalid("%s", TextStartWithUser)
	}
	tools := false
	for n, m := range ms {
		if n > 0 && m.Role == ms[n-1].Role {
			return invalid("%s", TextAlternate)
		}
		if len(m.Content) == 0 {
			return invalid("%s", MsgEmptyContent(n))
		}
		for k, b := range m.Content {
			if b.Text != nil && strings.TrimSpace(*b.Text) == "" {
				return invalid("%s", MsgBlankText(n, k))
			}
			if t := b.ToolResult; t != nil && t.Status == "error" && len(t.Content) == 0 {
				return invalid("%s", MsgEmptyErrorResult(n, k))
			}
			tools = tools || b.ToolUse != nil || b.ToolResult != nil
		}
	}
	if tools && !r.HasTools() {
		return invalid("%s", TextToolConfig)
	}
	if !r.IsClaude() {
		return nil
	}
	if e := checkClaudeImages(ms); e != nil {
		return e
	}
	if e := (mockanthropic.Validator{Secret: secret}).Validate(r.anthropic()); e != nil {
		return invalid("%s", e.Message)
	}
	return nil
}

// anthropic is the request as Bedrock hands it to Claude: one message per
// Converse message, reasoningContent as thinking blocks, cache points left
// out.
func (r *ConverseRequest) anthropic() *mockanthropic.MessagesRequest {
	out := &mockanthropic.MessagesRequest{Model: r.ModelID, Stream: true}
	if r.ThinkingEnabled() {
		out.Thinking = &mockanthropic.ThinkingConfig{Type: "enabled"}
	}
	for _, m := range r.Messages {
		am := mockanthropic.Message{Role: m.Role, Content: []mockanthropic.Block{}}
		for _, b := range m.Content {
			switch {
			case b.Text != nil:
				am.Content = append(am.Content, mockanthropic.Block{Type: "text", Text: *b.Text})
			case b.ReasoningContent != nil && b.ReasoningContent.ReasoningText != nil:
				rt := b.ReasoningContent.ReasoningText
				blk := mockanthropic.Block{Type: "thinking", Thinking: rt.Text}
				if rt.Signature != "" {
					blk.Signature = &rt.Signature
				}
				am.Content = append(am.Content, blk)
			case b.ReasoningContent != nil:
				am.Content = append(am.Content, mockanthropic.Block{Type: "redacted_thinking", Data: b.ReasoningContent.RedactedContent})
			case b.ToolUse != nil:
				am.Content = append(am.Content, mockanthropic.Block{Type: "tool_use", ID: b.ToolUse.ToolUseID, Name: b.ToolUse.Name, Input: b.ToolUse.Input})
			case b.ToolResult != nil:
				c, _ := json.Marshal(b.ToolResult.Text())
				am.Content = append(am.Content, mockanthropic.Block{Type: "tool_result", ToolUseID: b.ToolResult.ToolUseID,
					Content: c, IsError: b.ToolResult.Status == "error"})
			case len(b.Image) > 0 || len(b.Document) > 0:
				am.Content = append(am.Content, mockanthropic.Block{Type: "image"})
			}
		}
		out.Messages = append(out.Messages, am)
	}
	return out
}

// ClaudeImageBase64Max is Claude's limit on an image's base64 through
// Converse: the model's own 5 MB (5,242,880 bytes) on the base64 of
// image.source.bytes, so 3.75 MB of image.
const ClaudeImageBase64Max = 5 << 20

// MsgClaudeImageTooLarge is Claude's answer through Converse to an image of
// n bytes of base64 over ClaudeImageBase64Max at path (messages.N.content.M,
// or messages.N.content.M.tool_result.content.K for a tool result's image),
// as users report it (aws-solutions-library-samples/accelerated-intelligent-document-processing-on-aws#778:
// "ValidationException: The model returned the following errors:
// messages.0.content.2.image.source.bytes: image exceeds 5 MB maximum:
// 7167852 bytes > 5242880 bytes"). The path through a tool result is
// Anthropic's (docs/preflight.md); not seen from Bedrock.
func MsgClaudeImageTooLarge(path string, n int) string {
	return fmt.Sprintf("The model returned the following errors: %s.image.source.bytes: image exceeds 5 MB maximum: %d bytes > %d bytes", path, n, ClaudeImageBase64Max)
}

// Images lists the request's image blocks, a tool result's among them,
// in order, with the base64 of their source.bytes and the path Claude's
// errors print (messages.N.content.M, or
// messages.N.content.M.tool_result.content.K).
// A nil request (a body that did not parse) has none.
func (r *ConverseRequest) Images() []mockanthropic.RequestImage {
	if r == nil {
		return nil
	}
	return images(r.Messages)
}

func images(ms []Message) []mockanthropic.RequestImage {
	data := func(raw json.RawMessage) string {
		var im struct {
			Source struct {
				Bytes string `json:"bytes"`
			} `json:"source"`
		}
		if json.Unmarshal(raw, &im) != nil {
			return ""
		}
		return im.Source.Bytes
	}
	var out []mockanthropic.RequestImage
	for n, m := range ms {
		for k, b := range m.Content {
			if len(b.Image) > 0 {
				out = append(out, mockanthropic.RequestImage{Path: fmt.Sprintf("messages.%d.content.%d", n, k), Data: data(b.Image)})
			}
			if b.ToolResult == nil {
				continue
			}
			for j, c := range b.ToolResult.Content {
				if len(c.Image) > 0 {
					out = append(out, mockanthropic.RequestImage{Path: fmt.Sprintf("messages.%d.content.%d.tool_result.content.%d", n, k, j), Data: data(c.Image), Tool: true})
				}
			}
		}
	}
	return out
}

// checkClaudeImages applies Claude's 5 MB to each image of the request (a
// message's image blocks and the images inside its tool results; the
// base64 string, the JSON value of source.bytes, is measured, as the
// model's error prints it), then refuses an image with no data or data
// whose header does not decode as a PNG, JPEG, GIF or WebP image
// (mockstream.ImageConfig, as mockanthropic), with Claude's texts for
// them after Bedrock's prefix: MsgClaudeImageEmpty, MsgClaudeInvalidImage.
func checkClaudeImages(ms []Message) *APIError {
	ims := images(ms)
	for _, im := range ims {
		if len(im.Data) > ClaudeImageBase64Max {
			return invalid("%s", MsgClaudeImageTooLarge(im.Path, len(im.Data)))
		}
	}
	for _, im := range ims {
		if im.Data == "" {
			return invalid("%s", MsgClaudeImageEmpty(im.Path))
		}
		if _, ok := mockstream.ImageConfig(im.Data); !ok {
			return invalid("%s", MsgClaudeInvalidImage)
		}
	}
	return nil
}

// MsgClaudeInvalidImage is Claude's answer through Converse to image data
// that is no image: Anthropic's text (mockanthropic.TextInvalidImage)
// after Bedrock's prefix, modelled on the 5 MB error users report
// (MsgClaudeImageTooLarge); no report of this text from Bedrock was found.
const MsgClaudeInvalidImage = "The model returned the following errors: " + mockanthropic.TextInvalidImage

// MsgClaudeImageEmpty is Claude's answer through Converse to an image with
// no data at path: Anthropic's text (mockanthropic.TextEmptyImage) for the
// block's source.bytes after Bedrock's prefix, modelled as
// MsgClaudeInvalidImage is.
func MsgClaudeImageEmpty(path string) string {
	return "The model returned the following errors: " + path + ".image.source.bytes: " + mockanthropic.TextEmptyImage
}
