package opencode

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/sessfix/sessfix/pkg/store"
)

// ErrorType is the error-driven recovery class of a provider error.
type ErrorType string

// Error types. Their names are stable: they are in scan's JSON output
// (error_type) and in the docs. DefaultFix says which have a storage repair.
const (
	ErrorNone                      ErrorType = ""
	ErrorThinkingBlockOrder        ErrorType = "thinking_block_order"
	ErrorThinkingDisabledViolation ErrorType = "thinking_disabled_violation"
	ErrorToolResultMissing         ErrorType = "tool_result_missing"
	ErrorEmptyContent              ErrorType = "empty_content"
	ErrorThinkingModified          ErrorType = "thinking_modified"
	ErrorPrefillUnsupported        ErrorType = "prefill_unsupported"
	ErrorInvalidSignature          ErrorType = "invalid_signature"
	// ErrorFirstMessageNotUser: Anthropic or Bedrock got a conversation
	// whose first message is not a user message.
	ErrorFirstMessageNotUser ErrorType = "first_message_not_user"

	// ErrorReasoningContentMissing: an OpenAI-compatible API in thinking
	// mode (DeepSeek, Kimi/Moonshot) got an assistant tool-call message
	// without its reasoning_content.
	ErrorReasoningContentMissing ErrorType = "reasoning_content_missing"
	// ErrorReasoningWithoutFollowing: the OpenAI Responses API got a
	// reasoning item (rs_…) without the item it produced after it.
	ErrorReasoningWithoutFollowing ErrorType = "reasoning_without_following_item"
	// ErrorReasoningItemMissing: the Responses API got an output item
	// (msg_…, fc_…) without the reasoning item that preceded it.
	ErrorReasoningItemMissing ErrorType = "reasoning_item_missing"
	// ErrorEncryptedContentInvalid: the Responses API cannot verify
	// replayed encrypted reasoning (another account, organisation or model).
	ErrorEncryptedContentInvalid ErrorType = "encrypted_content_invalid"
	// ErrorItemNotPersisted: the Responses API was asked for an item by id
	// that it never stored (the session was made with store:false).
	ErrorItemNotPersisted ErrorType = "item_not_persisted"
	// ErrorInvalidItemID: the Responses API got an item with an empty id.
	ErrorInvalidItemID ErrorType = "invalid_item_id"
	// ErrorThoughtSignatureMissing: Gemini 3 got a function call of the
	// current turn without its thought_signature.
	ErrorThoughtSignatureMissing ErrorType = "thought_signature_missing"
	// ErrorThoughtSignatureCorrupted: Gemini cannot verify a replayed
	// thought signature (another key's account or another model).
	ErrorThoughtSignatureCorrupted ErrorType = "thought_signature_corrupted"
	// ErrorTurnOrder: Gemini got a function call or response turn out of
	// order.
	ErrorTurnOrder ErrorType = "turn_order"

	// The errors of a history too big to send: an image over the
	// provider's size or dimension limit, too many images, image data that
	// is no image, files over the request size limit, a prompt over the
	// model's context window. sessfix finds them (the preflight's limits on
	// a request's size); it shrinks an image a user pasted or a tool
	// returned (shrinkImage), prunes old tool results for a request over the
	// image count or the context window (markToolCompacted), and replaces
	// image data that is no image, and PDFs over the request size, by a
	// placeholder (replaceMedia). An image error the preflight does not find
	// is not repaired (NotRepairedYet).

	// ErrorImageTooLarge: an image's base64 data is over the limit
	// (Anthropic: 5 MB).
	ErrorImageTooLarge ErrorType = "image_too_large"
	// ErrorImageDimensions: an image is wider or taller than the limit
	// (Anthropic: 8000 px, 2000 px in a request of more than 20 images).
	ErrorImageDimensions ErrorType = "image_dimensions"
	// ErrorTooManyImages: the request holds more images than allowed.
	ErrorTooManyImages ErrorType = "too_many_images"
	// ErrorInvalidImage: an image block's data is not an image of a
	// supported type.
	ErrorInvalidImage ErrorType = "invalid_image"
	// ErrorRequestTooLarge: the request is over the API's request size
	// limit (Anthropic: 32 MB, 413 request_too_large), such as with an
	// attached PDF of tens of MB.
	ErrorRequestTooLarge ErrorType = "request_too_large"
	// ErrorPDFPages: the PDFs of the request have more pages together than
	// the API takes (Anthropic: 100 for a model with a 200k-token context
	// window, 600 for the others).
	ErrorPDFPages ErrorType = "pdf_pages"
	// ErrorInvalidPDF: a document block typed PDF holds data that is not
	// a PDF.
	ErrorInvalidPDF ErrorType = "invalid_pdf"
	// ErrorPDFUnprocessable: the API could not read a PDF of the request
	// and names neither the PDF nor the reason (Anthropic's "Could not
	// process PDF").
	ErrorPDFUnprocessable ErrorType = "pdf_unprocessable"
	// ErrorContextOverflow: the request is over the model's context window
	// (Anthropic's "prompt is too long", OpenAI's context_length_exceeded,
	// OpenCode's ContextOverflowError).
	ErrorContextOverflow ErrorType = "context_overflow"
	// ErrorToolCallIDInvalid: Mistral got a tool call id that is not nine
	// letters or digits (a call another provider minted: Anthropic's
	// toolu_…, OpenAI's call_…).
	ErrorToolCallIDInvalid ErrorType = "tool_call_id_invalid"
	// ErrorToolUseIDInvalid: the Messages API got a tool_use id that is
	// empty (or not letters, digits, _ and -) or that another tool_use of
	// the request has too (a call a provider gave no id, or the ids Kimi
	// K2 mints per response, after a switch to Claude).
	ErrorToolUseIDInvalid ErrorType = "tool_use_id_invalid"
	// ErrorToolInputTruncated: a tool call's stored input is not the JSON
	// object the request needs (the output limit cut it off mid-input), so
	// the request fails before or at the provider.
	ErrorToolInputTruncated ErrorType = "tool_input_truncated"
)

// NotRepairedYet reports the error types sessfix recognises and could
// repair (shrinking an image, pruning old tool results, a placeholder) but
// does not repair yet: fix says so instead of planning a change.
func (t ErrorType) NotRepairedYet() bool {
	switch t {
	case ErrorImageTooLarge, ErrorImageDimensions, ErrorTooManyImages, ErrorInvalidImage:
		return true
	}
	return false
}

// ContextOverflowName is the error name OpenCode stores on an assistant
// message whose request was over the model's context window, whatever the
// provider's text.
const ContextOverflowName = "ContextOverflowError"

// NotRepairedYetNote is what scan, diagnose and fix say about an error or a
// finding of a NotRepairedYet type.
const NotRepairedYetNote = "not repaired yet: sessfix repairs an image only where the preflight finds it; " +
	"remove the image or start a new session"

// ContextNoCauseNote is what scan and fix say about a context-window error
// no SF174 finding repairs.
const ContextNoCauseNote = "sessfix finds no history over the model's context window that pruning old tool results brings under it " +
	"(the window is not known, the next request is within it by sessfix's estimate, or what is over it is not old tool results); " +
	"shorten the history with `sessfix rewind` or `sessfix fork`"

// PDFNoCauseNote is what scan and fix say about a PDF the provider could
// not process when every PDF the failed request sent had been taken
// before (no SF179 finding).
const PDFNoCauseNote = "every PDF the failed request sent had been taken by the provider before, so sessfix names none: " +
	"the provider may have failed only this once (users saw the error go away on a retry); resume the session once more"

// RequestSizeNoCauseNote is what scan and fix say about a request size
// error no SF175 or SF180 finding repairs.
const RequestSizeNoCauseNote = "sessfix finds no file over a request size limit it knows, and no file the failed request was the first to send " +
	"(the last request the provider accepted held every file this one did, or no failed attempt is stored), so it names none; " +
	"shorten the history with `sessfix rewind` or `sessfix fork`"

// PDFPagesNoCauseNote is what scan and fix say about a PDF page-limit
// error when the PDFs sessfix can count are within the limit (no SF177
// finding above info).
const PDFPagesNoCauseNote = "the PDFs sessfix can count have no more pages than the limit, so it names none; " +
	"a PDF whose pages it cannot count (an info SF177 finding names each) may be what the provider counted: " +
	"`sessfix drop SESSION --part PART` takes its part out, or shorten the history with `sessfix rewind` or `sessfix fork`"

// InvalidImageNoCauseNote is what scan and fix say about an invalid-image
// error when every image the request sends has the header of an image of
// a type the provider takes (no SF173 finding) and SF181 names none: no
// image is new since the last request the provider accepted, the provider
// asked for a retry not made yet (Gemini's "Unable to process input image.
// Please retry…" comes for such images too), or no attempt is stored.
const InvalidImageNoCauseNote = "every image the request sends has the header of a PNG, JPEG, GIF or WebP, and sessfix names none " +
	"(none is new since the last request the provider accepted, or the provider asked for a retry that has not been made, or no failed attempt is stored): " +
	"resume the session once more; if it fails again, a scan names the images the failed request was the first to send (SF181), " +
	"`sessfix show --sent SESSION` lists the images the request sends and `sessfix drop SESSION --part PART` takes one out"

// AsksForRetry reports a provider's error text that asks for the request
// to be made again (Gemini's "Unable to process input image. Please retry
// or report in …"): the refusal may not come back.
func AsksForRetry(text string) bool {
	return strings.Contains(strings.ToLower(text), "please retry")
}

// NoCauseNote is what scan and fix say about a stored or pasted error of
// type t when nothing in the session causes it, for the types that have
// such a note ("" for the others).
func NoCauseNote(t ErrorType) string {
	switch t {
	case ErrorContextOverflow:
		return ContextNoCauseNote
	case ErrorPDFUnprocessable:
		return PDFNoCauseNote
	case ErrorRequestTooLarge:
		return RequestSizeNoCauseNote
	case ErrorPDFPages:
		return PDFPagesNoCauseNote
	case ErrorInvalidImage:
		return InvalidImageNoCauseNote
	}
	return ""
}

// NoCauseNoteIn is NoCauseNote(t) with the session's id and store in the
// commands it names, so that they run as printed: SESSION becomes
// "ID --store PATH" (quoted for a shell); PART stays for the user to pick
// from what `sessfix show --sent` lists. An empty id leaves the note as it
// is.
func NoCauseNoteIn(t ErrorType, id, storePath string) string {
	note := NoCauseNote(t)
	if note == "" || id == "" {
		return note
	}
	sess := store.ShellArg(id)
	if storePath != "" {
		sess += " --store " + store.ShellArg(storePath)
	}
	return strings.ReplaceAll(note, "SESSION", sess)
}

// DefaultFix returns the mutations error-driven recovery applies to the
// stored message an error of this type points at, in rules.md notation; ""
// when no storage repair exists for the type.
func (t ErrorType) DefaultFix() string {
	switch t {
	case ErrorThinkingBlockOrder:
		return "moveThinkingFirst|stripThinkingParts"
	case ErrorThinkingDisabledViolation:
		return "stripThinkingParts"
	case ErrorToolResultMissing:
		return "markToolAborted"
	case ErrorEmptyContent:
		return "replaceEmptyTextParts|injectTextPart"
	case ErrorInvalidSignature:
		return "stripThinkingParts|excludeMessage"
	case ErrorReasoningContentMissing:
		return "prependThinkingPart|excludeMessage"
	case ErrorReasoningWithoutFollowing:
		return "dropEncryptedReasoning|excludeMessage"
	case ErrorEncryptedContentInvalid:
		return "dropEncryptedReasoning"
	case ErrorItemNotPersisted:
		return "dropItemIDs"
	case ErrorThoughtSignatureCorrupted:
		return "dropThoughtSignatures"
	case ErrorToolInputTruncated:
		return "markToolCutOff"
	case ErrorToolCallIDInvalid:
		return "rekeyCallIDs"
	case ErrorToolUseIDInvalid:
		return "rekeyToolUseIDs"
	}
	return ""
}

// Example is a provider error text of the type, as the API words it (ids
// and indexes are examples).
func (t ErrorType) Example() string {
	switch t {
	case ErrorThinkingBlockOrder:
		return "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`."
	case ErrorThinkingDisabledViolation:
		return "When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`."
	case ErrorToolResultMissing:
		return "No tool output found for function call call_0a1b2c."
	case ErrorEmptyContent:
		return "messages: text content blocks must contain non-whitespace text"
	case ErrorThinkingModified:
		return "thinking blocks in the latest assistant message cannot be modified"
	case ErrorPrefillUnsupported:
		return "This model does not support assistant message prefill. The conversation must end with a user message."
	case ErrorInvalidSignature:
		return "messages.1.content.0: Invalid `signature` in `thinking` block"
	case ErrorFirstMessageNotUser:
		return `messages: first message must use the "user" role`
	case ErrorReasoningContentMissing:
		return "thinking is enabled but reasoning_content is missing in assistant tool call message at index 2"
	case ErrorReasoningWithoutFollowing:
		return "Item 'rs_0a1b2c' of type 'reasoning' was provided without its required following item."
	case ErrorReasoningItemMissing:
		return "Item 'msg_0a1b2c' of type 'message' was provided without its required 'reasoning' item: 'rs_3d4e5f'."
	case ErrorEncryptedContentInvalid:
		return "The encrypted content for item rs_0a1b2c could not be verified."
	case ErrorItemNotPersisted:
		return "Item with id 'rs_0a1b2c' not found. Items are not persisted when `store` is set to false."
	case ErrorInvalidItemID:
		return "Invalid 'input[3].id': ''. Expected an ID that contains letters, numbers, underscores, or dashes."
	case ErrorThoughtSignatureMissing:
		return "Function call is missing a thought_signature in functionCall parts. … function call `default_api:bash` , position 2."
	case ErrorThoughtSignatureCorrupted:
		return "Corrupted thought signature."
	case ErrorTurnOrder:
		return "Please ensure that function response turn comes immediately after a function call turn."
	case ErrorImageTooLarge:
		return "messages.1.content.0.image.source.base64: image exceeds 5 MB maximum: 5895160 bytes > 5242880 bytes"
	case ErrorImageDimensions:
		return "messages.1.content.0.image.source.base64.data: At least one of the image dimensions exceed max allowed size for many-image requests: 2000 pixels"
	case ErrorTooManyImages:
		return "request contains 52 images, exceeding the maximum of 50 allowed per request"
	case ErrorInvalidImage:
		return "The image data you provided does not represent a valid image. Please check your input and try again with one of the supported image formats."
	case ErrorRequestTooLarge:
		return "request_too_large: Request exceeds the maximum allowed number of bytes. The maximum request size is 32 MB for standard API endpoints."
	case ErrorPDFPages:
		return PDFPagesText(AnthropicPDFPagesMax)
	case ErrorPDFUnprocessable:
		return TextPDFUnprocessable
	case ErrorInvalidPDF:
		return "messages.0.content.2.pdf.source.base64.data: " + TextInvalidPDF
	case ErrorContextOverflow:
		return "prompt is too long: 215000 tokens > 200000 maximum"
	case ErrorToolInputTruncated:
		return "Invalid JSON input for openai-responses tool call patch"
	case ErrorToolCallIDInvalid:
		return "Tool call id was toolu_01ABCdef but must be a-z, A-Z, 0-9, with a length of 9."
	case ErrorToolUseIDInvalid:
		return "messages.1.content.2: `tool_use` ids must be unique"
	}
	return ""
}

var emptyContentField = regexp.MustCompile(`content field.*is empty`)

// DetectErrorType classifies a provider's error text (the brief's
// detectErrorType), as the API prints it or as OpenCode stores it (with a
// prefix such as "Error from provider (DeepSeek): " or Bedrock's
// "undefined: "). The other providers' texts are checked first: they are
// specific and some mention thinking or signatures. Then thinking patterns
// before tool patterns: Anthropic's thinking errors carry a docs link that
// mentions tool_use and tool_result. It returns ErrorNone when the text
// matches no class.
func DetectErrorType(text string) ErrorType {
	t := strings.ToLower(strings.ReplaceAll(text, "`", ""))
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(t, s) {
				return true
			}
		}
		return false
	}
	if typ := detectOtherFamilies(t, has); typ != ErrorNone {
		return typ
	}
	if strings.Contains(t, "thinking") {
		if has("first block", "must start with", "preceeding", "final block", "cannot be thinking") ||
			(strings.Contains(t, "expected") && strings.Contains(t, "found")) {
			return ErrorThinkingBlockOrder
		}
		if strings.Contains(t, "thinking is disabled") && strings.Contains(t, "cannot contain") {
			return ErrorThinkingDisabledViolation
		}
		if strings.Contains(t, "cannot be modified") {
			return ErrorThinkingModified
		}
	}
	if has("bound to a different conversation") {
		return ErrorThinkingModified
	}
	// A missing or invalid signature, or redacted thinking without its data
	// (the redacted block's signature): the thinking cannot be sent back.
	if (strings.Contains(t, "signature") || strings.Contains(t, "redacted_thinking.data")) && has("invalid", "field required") {
		return ErrorInvalidSignature
	}
	if (strings.Contains(t, "tool_use") && strings.Contains(t, "tool_result")) ||
		has("no tool output found for function call", "must be followed by tool messages responding to each") {
		return ErrorToolResultMissing
	}
	if has("non-empty content", "must be non-empty", "non-whitespace text", "is blank", "parts must not be empty") || emptyContentField.MatchString(t) {
		return ErrorEmptyContent
	}
	if strings.Contains(t, "assistant message prefill") {
		return ErrorPrefillUnsupported
	}
	if has(`first message must use the "user" role`, "conversation must start with a user message") {
		return ErrorFirstMessageNotUser
	}
	return ErrorNone
}

// detectOtherFamilies classifies the texts of the OpenAI-compatible thinking
// APIs (DeepSeek, Kimi), the OpenAI Responses API and Gemini; t is the
// lowercased text without backticks.
func detectOtherFamilies(t string, has func(...string) bool) ErrorType {
	switch {
	case strings.Contains(t, "image exceeds") && strings.Contains(t, "maximum"):
		return ErrorImageTooLarge
	case has("image dimensions exceed max allowed size", "exceed max allowed size for many-image requests"):
		return ErrorImageDimensions
	// Any wording whose limit ImageCountLimit reads (maxImagesRe), on a
	// text about images, and the wordings that print none.
	case has("too many images", "too much media:", "image(s) may be provided in one request") || strings.Contains(t, "image") && maxImagesRe.MatchString(t):
		return ErrorTooManyImages
	// xAI's wordings are users' quotes (NousResearch/hermes-agent#69078:
	// "Invalid PNG image" for a PNG that decodes, "Invalid JPEG image",
	// "base64 string of provided image cannot be decoded").
	case has("does not represent a valid image", "could not process image", "you uploaded an unsupported image", "provided image is not valid",
		"image cannot be empty", "unable to process input image", "invalid png image", "invalid jpeg image", "provided image cannot be decoded"):
		return ErrorInvalidImage
	case has("request_too_large", "exceeds the maximum allowed number of bytes", "request payload size exceeds the limit",
		"request exceeds the maximum size", "request entity too large", "payload too large"):
		return ErrorRequestTooLarge
	case pdfPagesRe.MatchString(t):
		return ErrorPDFPages
	case strings.Contains(t, "the pdf specified was not valid"):
		return ErrorInvalidPDF
	case strings.Contains(t, "could not process pdf"):
		return ErrorPDFUnprocessable
	case has("prompt is too long", "prompt too long", "context overflow", "context_length_exceeded",
		"exceeds the context window", "maximum context length", "contextoverflowerror", "exceed context limit"),
		strings.Contains(t, "input token count") && strings.Contains(t, "exceeds the maximum number of tokens"):
		return ErrorContextOverflow
	case strings.Contains(t, "reasoning_content") && has("must be passed back", "is missing", "missing reasoning_content"):
		return ErrorReasoningContentMissing
	case strings.Contains(t, "of type 'reasoning' was provided without its required following item"):
		return ErrorReasoningWithoutFollowing
	case strings.Contains(t, "was provided without its required 'reasoning' item"):
		return ErrorReasoningItemMissing
	case has("the encrypted content for item", "invalid_encrypted_content", "encrypted_content was not issued to this caller",
		"could not decrypt the provided encrypted_content"):
		return ErrorEncryptedContentInvalid
	case strings.Contains(t, "not found") && has("items are not persisted when store is set to false", "item with id"):
		return ErrorItemNotPersisted
	case strings.Contains(t, "invalid json input for") && strings.Contains(t, "tool call"):
		return ErrorToolInputTruncated
	case strings.Contains(t, "tool call id was") && strings.Contains(t, "must be a-z, a-z, 0-9, with a length of 9"):
		return ErrorToolCallIDInvalid
	case strings.Contains(t, "tool_use ids must be unique"),
		strings.Contains(t, "tool_use.id: string should match pattern"):
		return ErrorToolUseIDInvalid
	case invalidItemIDRe.MatchString(t):
		return ErrorInvalidItemID
	case strings.Contains(t, "missing a thought_signature"):
		return ErrorThoughtSignatureMissing
	case strings.Contains(t, "corrupted thought signature"):
		return ErrorThoughtSignatureCorrupted
	case has("function call turn comes immediately after", "function response turn comes immediately after",
		"number of function response parts is equal to the number of function call parts"):
		return ErrorTurnOrder
	}
	return ErrorNone
}

var invalidItemIDRe = regexp.MustCompile(`invalid 'input\[\d+\]\.id'`)

var (
	messageIndexRe = regexp.MustCompile(`messages\.(\d+)`)
	// anyIndexRe finds the index a provider prints, in each family's words:
	// messages.N(.content.M) (Anthropic, Bedrock), messages[N] and DeepSeek's
	// "at message index N" / Kimi's "at index N" (Chat Completions), input[N]
	// (Responses), contents[N] and "position N" (Gemini).
	anyIndexRe = regexp.MustCompile(`messages\.\d+(?:\.content\.\d+)?|\bmessages\[(\d+)\]|\bat (?:message )?index (\d+)|\binput\[(\d+)\]|\bcontents\[(\d+)\]|\bposition (\d+)`)
	itemIDRe   = regexp.MustCompile(`\b(?:rs|msg|fc|call|toolu|tooluse)_[A-Za-z0-9_-]+`)
)

// ExtractMessageIndex returns N from the first "messages.N" in a provider
// error (the brief's extractMessageIndex).
func ExtractMessageIndex(text string) (int, bool) {
	m := messageIndexRe.FindStringSubmatch(text)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, false
	}
	return n, true
}

// ExtractIndex returns the first index a provider error names, in one
// spelling per family: "messages.N" or "messages.N.content.M" (Anthropic,
// Bedrock, as printed), "messages[N]" (Chat Completions: also DeepSeek's
// "at message index N" and Kimi's "at index N"), "input[N]" (Responses),
// "contents[N]" or "position N" (Gemini), or "" when there is none.
func ExtractIndex(text string) string {
	m := anyIndexRe.FindStringSubmatch(text)
	switch {
	case m == nil:
		return ""
	case m[1] != "":
		return "messages[" + m[1] + "]"
	case m[2] != "":
		return "messages[" + m[2] + "]"
	case m[3] != "":
		return "input[" + m[3] + "]"
	case m[4] != "":
		return "contents[" + m[4] + "]"
	case m[5] != "":
		return "position " + m[5]
	}
	return m[0]
}

// IsMessagesIndex reports an index in the Anthropic spelling
// ("messages.N", "messages.N.content.M"), the one the preflight's request
// maps (Request.LocateIndex).
func IsMessagesIndex(index string) bool { return strings.HasPrefix(index, "messages.") }

// ExtractItemID returns the first provider item or call id a provider error
// names: an OpenAI Responses item ("rs_…" reasoning, "msg_…" message,
// "fc_…" function call), a tool call id ("call_…", Anthropic's "toolu_…",
// Bedrock's "tooluse_…"), or "". Stored parts keep item ids in their
// metadata and call ids in callID (ItemPart).
func ExtractItemID(text string) string {
	for _, id := range itemIDRe.FindAllString(text, -1) {
		if id != "call_id" {
			return id
		}
	}
	return ""
}

// ErrorTypes lists every error type DetectErrorType returns, in the order
// it checks them.
func ErrorTypes() []ErrorType {
	return []ErrorType{
		ErrorReasoningContentMissing, ErrorReasoningWithoutFollowing, ErrorReasoningItemMissing,
		ErrorEncryptedContentInvalid, ErrorItemNotPersisted, ErrorToolInputTruncated, ErrorToolCallIDInvalid, ErrorToolUseIDInvalid, ErrorInvalidItemID,
		ErrorThoughtSignatureMissing, ErrorThoughtSignatureCorrupted, ErrorTurnOrder,
		ErrorThinkingBlockOrder, ErrorThinkingDisabledViolation, ErrorThinkingModified,
		ErrorInvalidSignature, ErrorToolResultMissing, ErrorEmptyContent, ErrorPrefillUnsupported,
		ErrorFirstMessageNotUser,
		ErrorImageTooLarge, ErrorImageDimensions, ErrorTooManyImages, ErrorInvalidImage, ErrorRequestTooLarge, ErrorPDFPages, ErrorInvalidPDF, ErrorPDFUnprocessable, ErrorContextOverflow,
	}
}
