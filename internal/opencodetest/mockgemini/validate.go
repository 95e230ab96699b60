package mockgemini

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"github.com/sessfix/sessfix/internal/opencodetest/mockstream"
	"net/http"
	"strings"
)

// DefaultSecret signs thought signatures when a Server has no Secret of its
// own.
var DefaultSecret = []byte("mockgemini-default-secret")

// Placeholder signatures Google documents for function calls that have no
// real signature (e.g. history injected from another model); the API
// accepts them in place of a signature.
const (
	SkipSignature    = "skip_thought_signature_validator"
	ContextSignature = "context_engineering_is_the_way_to_go"
)

const sigPrefix = "MOCKGEMSIG1"

// Sign returns a fresh thought signature for model: base64 of a prefix, a
// random nonce and HMAC-SHA256(secret, model, nonce). It verifies only for
// the same model and secret.
func Sign(secret []byte, model string) string {
	nonce := make([]byte, 12)
	_, _ = rand.Read(nonce)
	return base64.StdEncoding.EncodeToString(append(append([]byte(sigPrefix), nonce...), mac(secret, model, nonce)...))
}

func mac(secret []byte, model string, nonce []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(model))
	m.Write([]byte{0})
	m.Write(nonce)
	return m.Sum(nil)
}

// ValidSignature reports whether sig was issued by Sign for model and
// secret, or is one of Google's documented placeholders.
func ValidSignature(secret []byte, model, sig string) bool {
	if sig == SkipSignature || sig == ContextSignature {
		return true
	}
	raw, err := base64.StdEncoding.DecodeString(sig)
	if err != nil || len(raw) != len(sigPrefix)+12+sha256.Size || string(raw[:len(sigPrefix)]) != sigPrefix {
		return false
	}
	nonce := raw[len(sigPrefix) : len(sigPrefix)+12]
	return hmac.Equal(mac(secret, model, nonce), raw[len(sigPrefix)+12:])
}

// IsGemini3 reports whether model enforces Gemini 3's thought signature
// rules (gemini-3-pro-preview, gemini-3-flash-preview, gemini-3.1-…, …).
func IsGemini3(model string) bool {
	m := strings.ToLower(model)
	m = m[strings.LastIndex(m, "/")+1:]
	return strings.HasPrefix(m, "gemini-3")
}

// APIError is an error answer of the Gemini API.
type APIError struct {
	Code    int    // HTTP status, also error.code
	Status  string // error.status, e.g. INVALID_ARGUMENT
	Message string // error.message
}

func (e *APIError) Error() string { return fmt.Sprintf("%d %s: %s", e.Code, e.Status, e.Message) }

// Body is the JSON body the real API sends with the error.
func (e *APIError) Body() []byte {
	b, _ := json.Marshal(map[string]any{
		"error": map[string]any{"code": e.Code, "message": e.Message, "status": e.Status},
	})
	return b
}

// write sends the error answer as the API does.
func (e *APIError) write(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(e.Code)
	_, _ = w.Write(e.Body())
}

func invalid(format string, args ...any) *APIError {
	return &APIError{Code: http.StatusBadRequest, Status: "INVALID_ARGUMENT", Message: fmt.Sprintf(format, args...)}
}

// The texts of the errors the validator returns, as the real API words
// them. Where the API names an index or a function the Msg* helpers add it.
const (
	TextContentsNotSpecified = "* GenerateContentRequest.contents: contents is not specified\n"
	TextInvalidRole          = "Please use a valid role: user, model."
	TextCallTurnOrder        = "Please ensure that function call turn comes immediately after a user turn or after a function response turn."
	TextResponseTurnOrder    = "Please ensure that function response turn comes immediately after a function call turn."
	TextResponseCount        = "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn."
	TextCorruptedSignature   = "Corrupted thought signature."
	TextInvalidAPIKey        = "API key not valid. Please pass a valid API key."
	// TextInvalidImage is the answer to inline image data that is no
	// image, as users quote it (OBSERVED.md).
	TextInvalidImage = "Provided image is not valid"
	// TextUnableToProcessImage is the answer to an image of a type the
	// API takes that it could not process, as users quote it through
	// OpenAI-compatible proxies (egoist/chatwise-releases#799,
	// pollinations#4157); its status through the native API is not
	// known (modelled: 400 INVALID_ARGUMENT). Config.UnreadableImage says
	// which images.
	TextUnableToProcessImage = "Unable to process input image. Please retry or report in https://developers.generativeai.google/guide/troubleshooting"
)

// MsgEmptyParts is the error for a content at index n with no parts.
func MsgEmptyParts(n int) string {
	return fmt.Sprintf("* GenerateContentRequest.contents[%d].parts: contents.parts must not be empty.\n", n)
}

// MsgMissingSignature is the error for a Gemini 3 model step whose first
// functionCall part has no thoughtSignature. position is the 1-based index
// of that model content in "contents" (inferred from reports: a first call
// answered in the second content reads "position 2").
func MsgMissingSignature(function string, position int) string {
	return fmt.Sprintf("Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:%s` , position %d. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", function, position)
}

// Validator checks a request against the Gemini API's rules on history.
type Validator struct {
	// Secret verifies thought signatures (DefaultSecret when nil).
	Secret []byte
}

// Validate returns the error the API would answer r with, or nil. Checks run
// in a fixed order (contents and roles, empty parts, turn order, thought
// signatures, Gemini 3's signature requirement) and the first violation
// wins; the real API's order between several violations is not known.
func (v Validator) Validate(r *GenerateContentRequest) *APIError {
	secret := v.Secret
	if secret == nil {
		secret = DefaultSecret
	}
	cs := r.Contents
	if len(cs) == 0 {
		return invalid("%s", TextContentsNotSpecified)
	}
	for _, c := range cs {
		if c.Role != "user" && c.Role != "model" {
			return invalid("%s", TextInvalidRole)
		}
	}
	for n, c := range cs {
		if len(c.Parts) == 0 {
			return invalid("%s", MsgEmptyParts(n))
		}
	}
	for _, c := range cs {
		for _, p := range c.Parts {
			if mime, data, ok := p.inline(); ok && strings.HasPrefix(mime, "image/") && !imageOK(data) {
				return invalid("%s", TextInvalidImage)
			}
		}
	}
	// Turn order: a model turn with function calls follows a user turn; a
	// user turn with function responses follows a model turn with function
	// calls and answers each of them.
	for n, c := range cs {
		if c.Role == "model" && len(c.calls()) > 0 && (n == 0 || cs[n-1].Role != "user") {
			return invalid("%s", TextCallTurnOrder)
		}
		if k := c.responses(); c.Role == "user" && k > 0 {
			if n == 0 || cs[n-1].Role != "model" || len(cs[n-1].calls()) == 0 {
				return invalid("%s", TextResponseTurnOrder)
			}
			if k != len(cs[n-1].calls()) {
				return invalid("%s", TextResponseCount)
			}
		}
	}
	if !IsGemini3(r.Model) {
		return nil
	}
	// Every signature sent back must be one this model issued.
	for _, c := range cs {
		for _, p := range c.Parts {
			if p.ThoughtSignature != "" && !ValidSignature(secret, r.Model, p.ThoughtSignature) {
				return invalid("%s", TextCorruptedSignature)
			}
		}
	}
	// The current turn (everything after the last user prompt) must carry
	// the signature on the first function call of each model step.
	start := 0
	for n := len(cs) - 1; n >= 0; n-- {
		if cs[n].isPrompt() {
			start = n + 1
			break
		}
	}
	for n := start; n < len(cs); n++ {
		if cs[n].Role != "model" {
			continue
		}
		if calls := cs[n].calls(); len(calls) > 0 && calls[0].ThoughtSignature == "" {
			return invalid("%s", MsgMissingSignature(calls[0].FunctionCall.Name, n+1))
		}
	}
	return nil
}

// imageOK reports whether inline image data reads as an image.
func imageOK(data string) bool {
	_, ok := mockstream.ImageConfig(data)
	return ok
}
