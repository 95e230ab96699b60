package mockopenai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// APIError is an error answer.
type APIError struct {
	Dialect Dialect
	Status  int     // HTTP status
	Type    string  // error.type
	Message string  // error.message
	Param   *string // error.param (OpenAI, DeepSeek)
	Code    *string // error.code (OpenAI, DeepSeek)
	// HTML, when set, is sent as the body (text/html) instead of the
	// JSON error: a page from the edge in front of the API.
	HTML string
}

func (e *APIError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Type, e.Message) }

// Body is the JSON body the provider sends with the error:
//
//	OpenAI:   {"error":{"message":…,"type":…,"param":…,"code":…}}
//	DeepSeek: {"error":{"message":…,"type":"invalid_request_error","param":null,"code":"invalid_request_error"}}
//	Moonshot: {"error":{"message":…,"type":"invalid_request_error"}}
//	Mistral:  {"object":"error","message":…,"type":…,"param":null,"code":…}
func (e *APIError) Body() []byte {
	if e.Dialect == dialectMistral {
		return e.mistralBody()
	}
	inner := map[string]any{"message": e.Message, "type": e.Type}
	if e.Dialect != Moonshot {
		inner["param"] = e.Param
		inner["code"] = e.Code
	}
	b, _ := json.Marshal(map[string]any{"error": inner})
	return b
}

// write sends the error answer as the provider does.
func (e *APIError) write(w http.ResponseWriter) {
	if e.HTML != "" {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(e.Status)
		_, _ = w.Write([]byte(e.HTML))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-request-id", newID("req_"))
	w.WriteHeader(e.Status)
	_, _ = w.Write(e.Body())
}

func str(s string) *string { return &s }

// EdgeTooLargePage is the page the edge in front of OpenAI's API
// (Cloudflare) answers, with HTTP 413, for a request body over its limit.
// Users quote the answer as "Payload Too Large (Cloudflare 413 HTML)"
// (anomalyco/opencode#12060, a read of a large PNG on gpt-5.2-codex)
// without the page; this is Cloudflare's usual 413 page, a stand-in.
const EdgeTooLargePage = "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n" +
	"<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>cloudflare</center>\r\n</body>\r\n</html>\r\n"

// edgeTooLarge is the edge's refusal of a body over Config.MaxRequestBytes
// (its message, what the mock records, leaves the body's size out: it
// changes from run to run).
func edgeTooLarge(d Dialect, limit int) *APIError {
	return &APIError{Dialect: d, Status: http.StatusRequestEntityTooLarge, HTML: EdgeTooLargePage,
		Message: fmt.Sprintf("413 Request Entity Too Large: a body over the edge's %d bytes (mock)", limit)}
}

func invalid(d Dialect, param *string, format string, args ...any) *APIError {
	e := &APIError{Dialect: d, Status: http.StatusBadRequest, Type: "invalid_request_error", Message: fmt.Sprintf(format, args...), Param: param}
	if d == DeepSeek {
		e.Code = str("invalid_request_error")
	}
	return e
}

func notFound(d Dialect, method, path string) *APIError {
	return &APIError{Dialect: d, Status: http.StatusNotFound, Type: "invalid_request_error",
		Message: fmt.Sprintf("Invalid URL (%s %s)", method, path)}
}

func noKey(d Dialect) *APIError {
	return &APIError{Dialect: d, Status: http.StatusUnauthorized, Type: "invalid_request_error",
		Message: "You didn't provide an API key.", Code: str("missing_api_key")}
}

// contextLengthExceeded is OpenAI's refusal of a request over the context
// window: 400 invalid_request_error, code context_length_exceeded, param
// "messages" (Chat Completions) or "input" (Responses).
func contextLengthExceeded(d Dialect, param, msg string) *APIError {
	return &APIError{Dialect: d, Status: http.StatusBadRequest, Type: "invalid_request_error", Message: msg, Param: str(param), Code: str("context_length_exceeded")}
}

// MsgContextLength is Chat Completions' context_length_exceeded text for a
// request of n tokens to a model of a window of limit tokens, as users
// quote it (chathub-dev/chathub#126, ChatGPTNextWeb/NextChat#625).
func MsgContextLength(limit, n int) string {
	return fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", limit, n)
}

// Error texts. Where the API puts an index or id into the text, the Msg*
// helpers build it.
const (
	// TextDeepSeekPassBack is DeepSeek's error for a tool-call message
	// without reasoning_content from its V4 models (the text has no index).
	TextDeepSeekPassBack = "The `reasoning_content` in the thinking mode must be passed back to the API."
	// TextContextWindow is the Responses API's context_length_exceeded
	// text (anomalyco/opencode#6071, openai/codex#19269): it prints no
	// window.
	TextContextWindow = "Your input exceeds the context window of this model. Please adjust your input and try again."
	// TextStoreFalse ends the Responses API's "not found" error.
	TextStoreFalse = "Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input."
	textBadJSON    = "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)"
	deepSeekDocs   = " For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"
)

// MsgDeepSeekMissing is DeepSeek's error for the assistant tool-call
// message at index n of the request's messages (deepseek-reasoner and the
// V3 models), documentation link included.
func MsgDeepSeekMissing(n int) string {
	return fmt.Sprintf("Missing `reasoning_content` field in the assistant message at message index %d.%s", n, deepSeekDocs)
}

// MsgKimiMissing is Kimi's error for the assistant tool-call message at
// index n.
func MsgKimiMissing(n int) string {
	return fmt.Sprintf("thinking is enabled but reasoning_content is missing in assistant tool call message at index %d", n)
}

// MsgToolCallsWithoutResponse is the Chat Completions error for tool calls
// that no tool message answers.
func MsgToolCallsWithoutResponse(ids []string) string {
	return "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: " + strings.Join(ids, ", ")
}

// TextToolWithoutCall is the Chat Completions error for a tool message
// that answers no preceding tool call (the API's spelling).
const TextToolWithoutCall = "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."

// MsgReasoningWithoutFollowing is the Responses error for a reasoning item
// that is not followed by the item it produced.
func MsgReasoningWithoutFollowing(id string) string {
	return fmt.Sprintf("Item '%s' of type 'reasoning' was provided without its required following item.", id)
}

// MsgWithoutReasoning is the Responses error for an output item sent
// without the reasoning item that preceded it when it was produced.
func MsgWithoutReasoning(id, typ, reasoning string) string {
	return fmt.Sprintf("Item '%s' of type '%s' was provided without its required 'reasoning' item: '%s'.", id, typ, reasoning)
}

// MsgItemNotFound is the Responses error for an item referenced by id that
// the server does not hold.
func MsgItemNotFound(id string) string {
	return fmt.Sprintf("Item with id '%s' not found. %s", id, TextStoreFalse)
}

// MsgEncryptedNotVerified is the Responses error for encrypted reasoning
// content issued to another account or model.
func MsgEncryptedNotVerified(id string) string {
	return fmt.Sprintf("The encrypted content for item %s could not be verified.", id)
}

// MsgEmptyID is the Responses error for an item whose id is "".
func MsgEmptyID(n int) string {
	return fmt.Sprintf("Invalid 'input[%d].id': ''. Expected an ID that contains letters, numbers, underscores, or dashes, but this value contained additional characters.", n)
}

// MsgNoToolOutput is the error for a function call without its output.
func MsgNoToolOutput(callID string) string {
	return fmt.Sprintf("No tool output found for function call %s.", callID)
}

// MsgNoToolCall is the error for a function call output without its call.
func MsgNoToolCall(callID string) string {
	return fmt.Sprintf("No tool call found for function call output with call_id %s.", callID)
}
