package store

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/sessfix/sessfix/internal/bodyindex"
	"github.com/tidwall/gjson"
)

// CheckBody classifies a record body. It returns nil when the body is a JSON
// object, and a *ParseError naming the damage otherwise.
func CheckBody(raw []byte) error {
	_, err := checkBody(raw)
	return err
}

// checkBody is CheckBody that also returns the body's key index (see
// internal/bodyindex), built in the same pass as the validation; the index
// is nil when the body is damaged or cannot be indexed.
func checkBody(raw []byte) (*bodyindex.Index, error) {
	if len(raw) == 0 {
		return nil, &ParseError{Reason: "empty file"}
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return nil, &ParseError{Reason: "empty file", Detail: "only whitespace"}
	}
	idx, ok := bodyindex.Valid(raw, trimmed)
	if !ok {
		if e := encodingError(raw); e != nil {
			return nil, e
		}
		// Valid JSON holds no NUL byte (not even inside a string), so the
		// body is only searched for one once it failed to validate.
		if bytes.IndexByte(raw, 0) >= 0 {
			if len(bytes.Trim(raw, "\x00")) == 0 {
				return nil, &ParseError{Reason: "NUL-filled"}
			}
			return nil, &ParseError{Reason: "contains NUL bytes"}
		}
		var v any
		err := json.Unmarshal(trimmed, &v)
		var se *json.SyntaxError
		if err != nil && err.Error() == "unexpected end of JSON input" {
			return nil, &ParseError{Reason: "truncated JSON"}
		}
		if errors.As(err, &se) {
			return nil, &ParseError{Reason: "invalid JSON", Detail: se.Error()}
		}
		if err != nil {
			return nil, &ParseError{Reason: "invalid JSON", Detail: err.Error()}
		}
		return nil, &ParseError{Reason: "invalid JSON"}
	}
	if trimmed[0] != '{' {
		return nil, &ParseError{Reason: "not an object"}
	}
	return idx, nil
}

// NewMessage builds a Message from a record whose body passed CheckBody. It
// returns a *ParseError when the body lacks a role.
func NewMessage(rec Record, sessionID string) (*Message, error) {
	rec.Kind = KindMessage
	rec.idx, rec.valid = bodyindex.Build(rec.Raw), false
	return newMessage(rec, sessionID)
}

// newMessage is NewMessage for a record whose idx indexes its Raw.
func newMessage(rec Record, sessionID string) (*Message, error) {
	rec.Kind = KindMessage
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
	rec.idx, rec.valid = bodyindex.Build(rec.Raw), false
	return newPart(rec, messageID, sessionID)
}

// newPart is NewPart for a record whose idx indexes its Raw.
func newPart(rec Record, messageID, sessionID string) (*Part, error) {
	rec.Kind = KindPart
	typ := rec.Get("type")
	if typ.Type != gjson.String || typ.Str == "" {
		return nil, &ParseError{Reason: "missing type"}
	}
	return &Part{Record: rec, MessageID: messageID, SessionID: sessionID, Type: typ.Str}, nil
}

// encodingError names a body that is text in another encoding than the
// UTF-8 without byte order mark that OpenCode writes (a file saved by an
// editor, or an export redirected by Windows PowerShell, which writes
// UTF-16), or nil.
func encodingError(raw []byte) *ParseError {
	switch {
	case bytes.HasPrefix(raw, []byte("\xef\xbb\xbf")):
		return &ParseError{Reason: "starts with a UTF-8 byte order mark",
			Detail: "OpenCode writes JSON without one; save the file as UTF-8 without a BOM"}
	case len(raw) >= 4 && (raw[0] == 0xff && raw[1] == 0xfe && raw[3] == 0 || raw[0] == 0xfe && raw[1] == 0xff && raw[2] == 0):
		// A UTF-16 byte order mark, then the zero half of an ASCII '{'.
		return &ParseError{Reason: "UTF-16 text",
			Detail: "as Windows PowerShell's > writes it; convert the file to UTF-8 without a BOM (iconv -f UTF-16 -t UTF-8, or PowerShell 7's Out-File -Encoding utf8NoBOM)"}
	}
	return nil
}
