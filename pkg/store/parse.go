package store

import (
	"bytes"
	"encoding/json"

	"github.com/tidwall/gjson"
)

// CheckBody classifies a record body. It returns nil when the body is a JSON
// object, and a *ParseError naming the damage otherwise.
func CheckBody(raw []byte) error {
	if len(raw) == 0 {
		return &ParseError{Reason: "empty file"}
	}
	if len(bytes.Trim(raw, "\x00")) == 0 {
		return &ParseError{Reason: "NUL-filled"}
	}
	if bytes.IndexByte(raw, 0) >= 0 {
		return &ParseError{Reason: "contains NUL bytes"}
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return &ParseError{Reason: "empty file", Detail: "only whitespace"}
	}
	if !gjson.ValidBytes(trimmed) {
		var v any
		err := json.Unmarshal(trimmed, &v)
		var se *json.SyntaxError
		if err != nil && err.Error() == "unexpected end of JSON input" {
			return &ParseError{Reason: "truncated JSON"}
		}
		if errorsAs(err, &se) {
			return &ParseError{Reason: "invalid JSON", Detail: se.Error()}
		}
		if err != nil {
			return &ParseError{Reason: "invalid JSON", Detail: err.Error()}
		}
		return &ParseError{Reason: "invalid JSON"}
	}
	if trimmed[0] != '{' {
		return &ParseError{Reason: "not an object"}
	}
	return nil
}

// NewMessage builds a Message from a record whose body passed CheckBody. It
// returns a *ParseError when the body lacks a role.
func NewMessage(rec Record, sessionID string) (*Message, error) {
	rec.Kind = KindMessage
	rec.idx = indexBody(rec.Raw)
	role := rec.Get("role")
	if role.Type != gjson.String || role.Str == "" {
		return nil, &ParseError{Reason: "missing role"}
	}
	return &Message{
		Record:    rec,
		SessionID: sessionID,
		Role:      role.Str,
		Created:   rec.Get("time.created").Int(),
	}, nil
}

// NewPart builds a Part from a record whose body passed CheckBody. It returns
// a *ParseError when the body lacks a type.
func NewPart(rec Record, messageID, sessionID string) (*Part, error) {
	rec.Kind = KindPart
	rec.idx = indexBody(rec.Raw)
	typ := rec.Get("type")
	if typ.Type != gjson.String || typ.Str == "" {
		return nil, &ParseError{Reason: "missing type"}
	}
	return &Part{Record: rec, MessageID: messageID, SessionID: sessionID, Type: typ.Str}, nil
}
