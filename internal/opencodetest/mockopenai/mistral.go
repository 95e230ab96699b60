package mockopenai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// Mistral's rule on tool call ids: every id a request carries (an
// assistant message's tool_calls[].id, a tool message's tool_call_id) is
// nine letters or digits, whoever minted it. A history with tool calls of
// another provider (Anthropic's toolu_…, OpenAI's call_…) is refused with a
// 400 whose body is Mistral's own flat error object (OBSERVED.md, "Mistral:
// tool call ids").

// mistralCallID is the form Mistral accepts.
var mistralCallID = regexp.MustCompile(`^[a-zA-Z0-9]{9}$`)

// MistralFamily reports whether a model id names a Mistral model served
// through an OpenAI-compatible endpoint: mistral, magistral, ministral,
// devstral, codestral, pixtral, mixtral.
func MistralFamily(model string) bool {
	m := strings.ToLower(model)
	for _, name := range []string{"mistral", "magistral", "ministral", "devstral", "codestral", "pixtral", "mixtral"} {
		if strings.Contains(m, name) {
			return true
		}
	}
	return false
}

// MsgMistralCallID is Mistral's error for a tool call id not of its form.
func MsgMistralCallID(id string) string {
	return fmt.Sprintf("Tool call id was %s but must be a-z, A-Z, 0-9, with a length of 9.", id)
}

// mistralError is the answer to a request with a foreign tool call id:
// status 400, {"object":"error","message":…,"type":"invalid_function_call",
// "param":null,"code":"3280"}.
func mistralError(id string) *APIError {
	return &APIError{Dialect: dialectMistral, Status: http.StatusBadRequest, Type: "invalid_function_call",
		Message: MsgMistralCallID(id), Code: str("3280")}
}

// dialectMistral marks an error with Mistral's body; no route serves it.
const dialectMistral Dialect = "mistral"

func (e *APIError) mistralBody() []byte {
	b, _ := json.Marshal(map[string]any{"object": "error", "message": e.Message, "type": e.Type, "param": e.Param, "code": e.Code})
	return b
}

// checkMistralCallIDs returns Mistral's error for the first tool call id of
// the request not of its form, in message order, or nil.
func checkMistralCallIDs(r *ChatRequest) *APIError {
	for _, m := range r.Messages {
		for _, tc := range m.ToolCalls {
			if !mistralCallID.MatchString(tc.ID) {
				return mistralError(tc.ID)
			}
		}
		if m.Role == "tool" && !mistralCallID.MatchString(m.ToolCallID) {
			return mistralError(m.ToolCallID)
		}
	}
	return nil
}

// mistralID is a tool call id of Mistral's form, as it mints them.
func mistralID() string { return newID("")[:9] }

// mistralCallIDs gives the turn's tool calls without an id ids of
// Mistral's form, as a Mistral model's answer carries.
func mistralCallIDs(turn Turn) Turn {
	turn.Blocks = append([]Block(nil), turn.Blocks...)
	for i, b := range turn.Blocks {
		if b.Type == BlockToolCall && b.CallID == "" {
			turn.Blocks[i].CallID = mistralID()
		}
	}
	return turn
}
