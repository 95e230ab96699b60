package mockanthropic

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"unicode"

	"github.com/ledongthuc/pdf"

	"github.com/sessfix/sessfix/internal/opencodetest/mockstream"
)

// DefaultSecret signs thinking blocks when a Server has no Secret of its own.
var DefaultSecret = []byte("mockanthropic-default-secret")

const (
	sigPrefix      = "MOCKSIG1"
	redactedPrefix = "MOCKRED1"
)

// Sign returns the signature the mock issues for a thinking block's text:
// base64 of a fixed prefix and HMAC-SHA256(secret, thinking).
func Sign(secret []byte, thinking string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(thinking))
	return base64.StdEncoding.EncodeToString(append([]byte(sigPrefix), m.Sum(nil)...))
}

// ValidSignature reports whether sig is the mock's signature of thinking.
func ValidSignature(secret []byte, thinking, sig string) bool {
	return hmac.Equal([]byte(Sign(secret, thinking)), []byte(sig))
}

// RedactedData returns a fresh opaque payload for a redacted_thinking block.
func RedactedData(secret []byte) string {
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	m := hmac.New(sha256.New, secret)
	m.Write(nonce)
	return base64.StdEncoding.EncodeToString(append(append([]byte(redactedPrefix), nonce...), m.Sum(nil)...))
}

// ValidRedactedData reports whether data was issued by RedactedData.
func ValidRedactedData(secret []byte, data string) bool {
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil || len(raw) != len(redactedPrefix)+16+sha256.Size || string(raw[:len(redactedPrefix)]) != redactedPrefix {
		return false
	}
	nonce := raw[len(redactedPrefix) : len(redactedPrefix)+16]
	m := hmac.New(sha256.New, secret)
	m.Write(nonce)
	return hmac.Equal(m.Sum(nil), raw[len(redactedPrefix)+16:])
}

// APIError is an error answer of the Messages API.
type APIError struct {
	Status  int    // HTTP status
	Type    string // error.type, e.g. invalid_request_error
	Message string // error.message
}

func (e *APIError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Type, e.Message) }

// Body is the JSON body the real API sends with the error.
func (e *APIError) Body() []byte {
	b, _ := json.Marshal(map[string]any{
		"type":  "error",
		"error": map[string]string{"type": e.Type, "message": e.Message},
	})
	return b
}

// write sends the error answer as the API does.
func (e *APIError) write(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", mockstream.NewID("req_"))
	w.WriteHeader(e.Status)
	_, _ = w.Write(e.Body())
}

func invalid(format string, args ...any) *APIError {
	return &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: fmt.Sprintf(format, args...)}
}

// The texts of the errors the validator returns. Where the API puts an index
// prefix ("messages.N: ", "messages.N.content.M: ") the Msg* helpers add it.
const (
	TextEmptyContent         = "all messages must have non-empty content except for the optional final assistant message"
	TextEmptyTextBlock       = "messages: text content blocks must be non-empty"
	TextWhitespaceTextBlock  = "messages: text content blocks must contain non-whitespace text"
	TextSignatureRequired    = "thinking.signature: Field required"
	TextRedactedDataRequired = "redacted_thinking.data: Field required"
	TextInvalidSignature     = "Invalid `signature` in `thinking` block"
	TextInvalidRedacted      = "Invalid `data` in `redacted_thinking` block"
	TextFinalBlockThinking   = "The final block in an assistant message cannot be `thinking`."
	TextTrailingWhitespace   = "messages: final assistant content cannot end with trailing whitespace"
	TextNoPrefill            = "This model does not support assistant message prefill. The conversation must end with a user message."
	TextThinkingDisabled     = "When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request."
	// TextFirstNotUser is the answer to a conversation whose first message
	// is not a user message, as users report it from api.anthropic.com
	// (HTTP 400, invalid_request_error, no index): lobehub/lobehub#1601
	// (March 2024, endpoint https://api.anthropic.com), CherryHQ/cherry-studio#39
	// and tonyljx/TextWordExplain#2 (September 2024), and Bedrock's
	// InvokeModel (anthropics/anthropic-sdk-typescript#622, December 2024).
	// That last thread also reports the first-party API answering such a
	// request once; the mock follows the rule every other report shows.
	TextFirstNotUser = `messages: first message must use the "user" role`
)

// RequestBytesMax is the Messages API's request size limit, 32 MB, taken
// as 32 MiB (33,554,432 bytes): the API's errors page
// (https://platform.claude.com/docs/en/api/errors, "Request size limits")
// says the Messages API takes requests up to 32 MB and answers a larger one
// with 413 request_too_large, "returned from Cloudflare before the request
// reaches our API servers"; it does not say whether MB means 10^6 or 2^20
// bytes. The mock counts the whole request body.
const RequestBytesMax = 32 << 20

// TextRequestTooLarge is the message of that 413 answer, as the errors page
// gives it for request_too_large.
const TextRequestTooLarge = "Request exceeds the maximum allowed number of bytes. The maximum request size is 32 MB for standard API endpoints."

// RequestTooLarge is the answer to a request body of more than
// RequestBytesMax bytes: 413, {"type":"error","error":{"type":
// "request_too_large","message":TextRequestTooLarge}}.
func RequestTooLarge() *APIError {
	return &APIError{Status: http.StatusRequestEntityTooLarge, Type: "request_too_large", Message: TextRequestTooLarge}
}

// ImageBase64Max is the most base64 an image block may carry (5 MB).
const ImageBase64Max = 5 << 20

// MsgImageTooLarge is the API's answer to an image block of size bytes of
// base64, over ImageBase64Max (users' reports of the text: OpenCode #21668).
func MsgImageTooLarge(n, m, size int) string {
	return fmt.Sprintf("messages.%d.content.%d.image.source.base64: image exceeds 5 MB maximum: %d bytes > %d bytes", n, m, size, ImageBase64Max)
}

// MsgToolResultImageTooLarge is the API's answer to an image of size bytes
// of base64 inside a tool_result's content (block k of the result in block
// m of message n), over ImageBase64Max. The path names the tool_result as
// reported from the live API (earendil-works/pi#424, January 2026:
// "messages.168.content.0.tool_result.content.1.image.source.base64: image
// exceeds 5 MB maximum: 5649924 bytes > 5242880 bytes").
func MsgToolResultImageTooLarge(n, m, k, size int) string {
	return fmt.Sprintf("messages.%d.content.%d.tool_result.content.%d.image.source.base64: image exceeds 5 MB maximum: %d bytes > %d bytes", n, m, k, size, ImageBase64Max)
}

// MsgEmptyContent is the error for an empty message at index n.
func MsgEmptyContent(n int) string { return fmt.Sprintf("messages.%d: %s", n, TextEmptyContent) }

// MsgSignatureRequired is the error for a thinking block without signature.
func MsgSignatureRequired(n, m int) string {
	return fmt.Sprintf("messages.%d.content.%d.%s", n, m, TextSignatureRequired)
}

// MsgInvalidSignature is the error for a thinking block whose signature does
// not match its text.
func MsgInvalidSignature(n, m int) string {
	return fmt.Sprintf("messages.%d.content.%d: %s", n, m, TextInvalidSignature)
}

// MsgThinkingNotFirst is the error for an assistant message that contains
// thinking but starts with another block type.
func MsgThinkingNotFirst(n int, found string) string {
	return fmt.Sprintf("messages.%d.content.0: If an assistant message contains any thinking blocks, the first block must be `thinking` or `redacted_thinking`. Found `%s`.", n, found)
}

// MsgFinalBlockThinking is the error for an assistant message ending in
// thinking.
func MsgFinalBlockThinking(n int) string {
	return fmt.Sprintf("messages.%d: %s", n, TextFinalBlockThinking)
}

// MsgExpectedThinking is the error for the tool-loop assistant message that
// does not start with thinking while thinking is enabled.
func MsgExpectedThinking(n int, found string) string {
	return fmt.Sprintf("messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%s`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking", n, found)
}

// MsgThinkingDisabled is the error for thinking in a final-position assistant
// message while thinking is disabled.
func MsgThinkingDisabled(n, m int) string {
	return fmt.Sprintf("messages.%d.content.%d: %s", n, m, TextThinkingDisabled)
}

// MsgToolUseWithoutResult is the error for tool_use blocks of message n that
// have no tool_result in message n+1.
func MsgToolUseWithoutResult(n int, ids []string) string {
	return fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", n, strings.Join(ids, ", "))
}

// MsgUnexpectedToolResult is the error for a tool_result whose tool_use is not
// in the previous message.
func MsgUnexpectedToolResult(n, m int, id string) string {
	return fmt.Sprintf("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", n, m, id)
}

// Validator checks a request against the Messages API's rules on history.
type Validator struct {
	// Secret signs and verifies thinking blocks (DefaultSecret when nil).
	Secret []byte
	// RejectPrefill makes a final assistant message an error, as newer
	// models do.
	RejectPrefill bool
}

func isThinking(t string) bool { return t == "thinking" || t == "redacted_thinking" }

// Validate returns the error the API would answer r with, or nil. Checks run
// in a fixed order (schema, the first message's role, text blocks, empty messages, tool pairing,
// thinking order and signatures, thinking-mode rules, final assistant
// content) and the first violation wins.
func (v Validator) Validate(r *MessagesRequest) *APIError {
	secret := v.Secret
	if secret == nil {
		secret = DefaultSecret
	}
	msgs := r.Messages
	last := len(msgs) - 1

	// Schema.
	toolUseIDs := map[string]bool{}
	for n, m := range msgs {
		if m.Role != "user" && m.Role != "assistant" {
			return invalid("messages.%d.role: Input should be 'user' or 'assistant'", n)
		}
		for i, b := range m.Content {
			switch b.Type {
			case "tool_use":
				if !toolUseIDRe.MatchString(b.ID) {
					return invalid("messages.%d.content.%d.tool_use.id: %s", n, i, TextToolUseIDPattern)
				}
				if toolUseIDs[b.ID] {
					return invalid("messages.%d.content.%d: %s", n, i, TextToolUseIDsUnique)
				}
				toolUseIDs[b.ID] = true
			case "thinking":
				if b.Signature == nil {
					return invalid("%s", MsgSignatureRequired(n, i))
				}
			case "redacted_thinking":
				if b.Data == "" {
					return invalid("messages.%d.content.%d.%s", n, i, TextRedactedDataRequired)
				}
			case "image":
				if b.Source != nil && b.Source.Type == "base64" && len(b.Source.Data) > ImageBase64Max {
					return invalid("%s", MsgImageTooLarge(n, i, len(b.Source.Data)))
				}
			case "tool_result":
				if k, size := b.oversizedImage(); k >= 0 {
					return invalid("%s", MsgToolResultImageTooLarge(n, i, k, size))
				}
			}
		}
	}
	if e := checkImages(msgs); e != nil {
		return e
	}
	if e := checkPDFPages(msgs); e != nil {
		return e
	}
	// Role order. Consecutive messages of one role are not checked: the
	// API combines them into one turn, and @ai-sdk/anthropic merges them
	// before it sends anything.
	if len(msgs) > 0 && msgs[0].Role != "user" {
		return invalid("%s", TextFirstNotUser)
	}
	// Text blocks.
	for _, m := range msgs {
		for _, b := range m.Content {
			if b.Type != "text" {
				continue
			}
			if b.Text == "" {
				return invalid("%s", TextEmptyTextBlock)
			}
			if strings.TrimSpace(b.Text) == "" {
				return invalid("%s", TextWhitespaceTextBlock)
			}
		}
	}
	// Empty messages.
	for n, m := range msgs {
		if len(m.Content) == 0 && !(n == last && m.Role == "assistant") {
			return invalid("%s", MsgEmptyContent(n))
		}
	}
	// tool_use / tool_result pairing.
	for n, m := range msgs {
		switch m.Role {
		case "assistant":
			var missing []string
			for _, b := range m.Content {
				if b.Type != "tool_use" {
					continue
				}
				if n == last || msgs[n+1].Role != "user" || !hasToolResult(msgs[n+1], b.ID) {
					missing = append(missing, b.ID)
				}
			}
			if len(missing) > 0 {
				return invalid("%s", MsgToolUseWithoutResult(n, missing))
			}
		case "user":
			for i, b := range m.Content {
				if b.Type != "tool_result" {
					continue
				}
				if n == 0 || msgs[n-1].Role != "assistant" || !hasToolUse(msgs[n-1], b.ToolUseID) {
					return invalid("%s", MsgUnexpectedToolResult(n, i, b.ToolUseID))
				}
			}
		}
	}
	// Thinking order and signatures.
	for n, m := range msgs {
		if m.Role != "assistant" || len(m.Content) == 0 {
			continue
		}
		has := false
		for _, b := range m.Content {
			if isThinking(b.Type) {
				has = true
				break
			}
		}
		if !has {
			continue
		}
		if first := m.Content[0].Type; !isThinking(first) {
			return invalid("%s", MsgThinkingNotFirst(n, first))
		}
		if isThinking(m.Content[len(m.Content)-1].Type) {
			return invalid("%s", MsgFinalBlockThinking(n))
		}
		for i, b := range m.Content {
			switch b.Type {
			case "thinking":
				if !ValidSignature(secret, b.Thinking, *b.Signature) {
					return invalid("%s", MsgInvalidSignature(n, i))
				}
			case "redacted_thinking":
				if !ValidRedactedData(secret, b.Data) {
					return invalid("messages.%d.content.%d: %s", n, i, TextInvalidRedacted)
				}
			}
		}
	}
	// Thinking mode.
	if r.ThinkingEnabled() {
		if len(r.PendingToolResults()) > 0 && last >= 1 && msgs[last-1].Role == "assistant" {
			a := msgs[last-1]
			if len(a.Content) > 0 && !isThinking(a.Content[0].Type) {
				return invalid("%s", MsgExpectedThinking(last-1, a.Content[0].Type))
			}
		}
	} else if last >= 0 && msgs[last].Role == "assistant" {
		for i, b := range msgs[last].Content {
			if isThinking(b.Type) {
				return invalid("%s", MsgThinkingDisabled(last, i))
			}
		}
	}
	// Final assistant content.
	if last >= 0 && msgs[last].Role == "assistant" {
		c := msgs[last].Content
		if n := len(c); n > 0 && c[n-1].Type == "text" && strings.TrimRightFunc(c[n-1].Text, unicode.IsSpace) != c[n-1].Text {
			return invalid("%s", TextTrailingWhitespace)
		}
		if v.RejectPrefill {
			return invalid("%s", TextNoPrefill)
		}
	}
	return nil
}

func hasToolResult(m Message, id string) bool {
	for _, b := range m.Content {
		if b.Type == "tool_result" && b.ToolUseID == id {
			return true
		}
	}
	return false
}

func hasToolUse(m Message, id string) bool {
	for _, b := range m.Content {
		if b.Type == "tool_use" && b.ID == id {
			return true
		}
	}
	return false
}

// The vision limits (Anthropic's vision guide, "General limits"): at most
// ImagesMax images in a request (for a model with a 200k-token window),
// each at most ImageSideMax px on a side, or ManyImagesSideMax when the
// request holds more than ManyImages.
const (
	ImagesMax         = 100
	ImageSideMax      = 8000
	ManyImages        = 20
	ManyImagesSideMax = 2000
)

// RequestImage is an image block of a request: where it is, and its
// base64 data.
type RequestImage struct {
	Path string // messages.N.content.M, or …M.tool_result.content.K
	Data string
	Tool bool // inside a tool_result
}

// Images lists the request's base64 image blocks, a tool result's among
// them, in order: what the count and dimension limits are checked on. A
// nil request (a body that did not parse) has none.
func (r *MessagesRequest) Images() []RequestImage {
	if r == nil {
		return nil
	}
	return images(r.Messages)
}

func images(msgs []Message) []RequestImage {
	var out []RequestImage
	for n, m := range msgs {
		for i, b := range m.Content {
			switch b.Type {
			case "image":
				if b.Source != nil && b.Source.Type == "base64" {
					out = append(out, RequestImage{fmt.Sprintf("messages.%d.content.%d", n, i), b.Source.Data, false})
				}
			case "tool_result":
				var inner []Block
				if json.Unmarshal(b.Content, &inner) != nil {
					continue
				}
				for k, c := range inner {
					if c.Type == "image" && c.Source != nil && c.Source.Type == "base64" {
						out = append(out, RequestImage{fmt.Sprintf("messages.%d.content.%d.tool_result.content.%d", n, i, k), c.Source.Data, true})
					}
				}
			}
		}
	}
	return out
}

// TextToolUseIDPattern and TextToolUseIDsUnique are the API's answers to
// a tool_use whose id is not letters, digits, _ and - (an empty one), after
// messages.N.content.M.tool_use.id: , and to a tool_use id another
// tool_use of the request has, after messages.N.content.M: . Source:
// users' reports of the live API (anomalyco/opencode#1279, 2025-07, after a
// switch from Kimi K2 to Claude). The mock takes the strict reading of
// uniqueness, across the whole request; whether the API checks only within
// one message is not known.
const (
	TextToolUseIDPattern = "String should match pattern '^[a-zA-Z0-9_-]+$'"
	TextToolUseIDsUnique = "`tool_use` ids must be unique"
)

var toolUseIDRe = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// TextEmptyImage is the API's answer to an image block with no data, after
// the block's path (messages.N.content.M.image.source.base64: ). Source:
// users' reports of the live API (anthropics/claude-code#36712, 2026-03).
const TextEmptyImage = "image cannot be empty"

// TextInvalidImage is the API's answer to an image block whose data is not
// an image of a supported type (or not base64). It names no block. Source:
// users' reports of the live API (issue 22, provider-rules.md); OBSERVED.md.
const TextInvalidImage = "The image data you provided does not represent a valid image. Please check your input and try again with one of the supported image formats: ['image/jpeg', 'image/png', 'image/gif', 'image/webp']."

// MsgTooManyImages is the API's answer to a request of images and docs
// documents over ImagesMax together, as users quote the live API
// (anthropics/claude-code#23392 "too many images and documents: 104 + 1 >
// 100", #24541, kirodotdev/Kiro#8700). An older wording, "Too much media:
// 0 document pages + 103 images > 100" (anthropics/claude-code#3397,
// #19822, and #24541 in the same session as the other), is not produced.
func MsgTooManyImages(images, docs int) string {
	return fmt.Sprintf("too many images and documents: %d + %d > %d", images, docs, ImagesMax)
}

// document is a document block of a request: where it is, and its base64
// data ("" for another source).
type document struct {
	Path, Data string
}

// documents lists the request's document blocks, a tool result's among
// them.
func documents(msgs []Message) []document {
	var out []document
	add := func(b Block, path string) {
		if b.Type != "document" {
			return
		}
		d := document{Path: path}
		if b.Source != nil && b.Source.Type == "base64" {
			d.Data = b.Source.Data
		}
		out = append(out, d)
	}
	for n, m := range msgs {
		for i, b := range m.Content {
			add(b, fmt.Sprintf("messages.%d.content.%d", n, i))
			if b.Type == "tool_result" {
				var inner []Block
				if json.Unmarshal(b.Content, &inner) != nil {
					continue
				}
				for k, c := range inner {
					add(c, fmt.Sprintf("messages.%d.content.%d.tool_result.content.%d", n, i, k))
				}
			}
		}
	}
	return out
}

// TextInvalidPDF is the API's answer to a document block typed PDF whose
// data is not one, after the block's path and ".pdf.source.base64.data: "
// (users' quotes of the live API, anthropics/claude-code#5174, #19577,
// #20195; the path of a tool result's document is modelled on the image's).
const TextInvalidPDF = "The PDF specified was not valid."

// TextPDFUnprocessable is the API's answer to a PDF it cannot read, for
// reasons it does not name (anthropics/anthropic-sdk-python#903,
// anthropics/claude-code#13985, #14038): 400 invalid_request_error, no
// index. Config.UnreadablePDF says which PDFs the mock cannot read.
const TextPDFUnprocessable = "Could not process PDF"

// holdsPDF reports whether a base64 document of the request decodes to
// bytes that contain marker.
func holdsPDF(msgs []Message, marker []byte) bool {
	for _, d := range documents(msgs) {
		if raw, err := base64.StdEncoding.DecodeString(d.Data); err == nil && bytes.Contains(raw, marker) {
			return true
		}
	}
	return false
}

// TextImageUnprocessable is the API's answer to an image it cannot read
// although its type is one it takes, for reasons it does not name: 400
// invalid_request_error, no index (users' quotes of the live API: a PNG
// of 243 bytes the Read tool returned, anthropics/claude-code#2519; a
// PNG in a project's public folder, #15941; #49403, #56511).
// Config.UnreadableImage says which images the mock cannot read.
const TextImageUnprocessable = "Could not process image"

// holdsImage reports whether a base64 image of the request decodes to
// bytes that contain marker.
func holdsImage(msgs []Message, marker []byte) bool {
	for _, im := range images(msgs) {
		if raw, err := base64.StdEncoding.DecodeString(im.Data); err == nil && bytes.Contains(raw, marker) {
			return true
		}
	}
	return false
}

// PDFPagesMax is the most pages the PDFs of a request may have together
// (Anthropic's PDF support page, for a model with a 200k-token window).
const PDFPagesMax = 100

// MsgPDFPages is the API's answer to a request over PDFPagesMax pages, as
// users quote the live API (anthropics/claude-code#5707,
// badlogic/lemmy#40). It names no block.
func MsgPDFPages() string {
	return fmt.Sprintf("A maximum of %d PDF pages may be provided.", PDFPagesMax)
}

// checkPDFPages refuses a document with no PDF header in its first 1024
// bytes (TextInvalidPDF), and applies the page limit to the base64 PDFs of
// the request, each decoded whole and its page tree read
// (github.com/ledongthuc/pdf). A document with a header whose pages cannot
// be read is not counted: the API's answer to a PDF it cannot process
// ("Could not process PDF") comes only for the PDFs Config.UnreadablePDF
// marks.
func checkPDFPages(msgs []Message) *APIError {
	pages := 0
	for _, d := range documents(msgs) {
		raw, err := base64.StdEncoding.DecodeString(d.Data)
		if err != nil {
			continue
		}
		// A PDF's header may follow up to 1024 bytes of anything.
		if !bytes.Contains(raw[:min(len(raw), 1024+5)], []byte("%PDF-")) {
			return invalid("%s.pdf.source.base64.data: %s", d.Path, TextInvalidPDF)
		}
		pages += pdfPages(raw)
	}
	if pages > PDFPagesMax {
		return invalid("%s", MsgPDFPages())
	}
	return nil
}

// pdfPages is a PDF's page count, 0 when it cannot be read (the reader
// panics on some damaged files).
func pdfPages(raw []byte) (n int) {
	defer func() {
		if recover() != nil {
			n = 0
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		return 0
	}
	return max(0, r.NumPage())
}

// checkImages applies the count, data and dimension limits: no data at
// all is TextEmptyImage, data that is no PNG, JPEG, GIF or WebP image (its
// header does not decode) TextInvalidImage. The texts: the count's is users' reports of the API
// (MsgTooManyImages: images and documents together); the 2000 px text is
// users' reports of the API; the 8000 px text is modelled on it
// (OBSERVED.md, docs/preflight.md "Where the limits come from").
func checkImages(msgs []Message) *APIError {
	ims := images(msgs)
	if docs := len(documents(msgs)); len(ims)+docs > ImagesMax {
		return invalid("%s", MsgTooManyImages(len(ims), docs))
	}
	for _, im := range ims {
		if im.Data == "" {
			return invalid("%s.image.source.base64: %s", im.Path, TextEmptyImage)
		}
		cfg, ok := mockstream.ImageConfig(im.Data)
		if !ok {
			return invalid("%s", TextInvalidImage)
		}
		switch {
		case len(ims) > ManyImages && (cfg.Width > ManyImagesSideMax || cfg.Height > ManyImagesSideMax):
			return invalid("%s.image.source.base64.data: At least one of the image dimensions exceed max allowed size for many-image requests: %d pixels", im.Path, ManyImagesSideMax)
		case cfg.Width > ImageSideMax || cfg.Height > ImageSideMax:
			return invalid("%s.image.source.base64.data: At least one of the image dimensions exceed max allowed size: %d pixels", im.Path, ImageSideMax)
		}
	}
	return nil
}
