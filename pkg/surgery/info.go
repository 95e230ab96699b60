package surgery

import (
	"encoding/json"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/store"
)

// field names one key of a session record, which the shapes spell
// differently: a SQLite session is a row, read as a JSON object of its
// columns (JSON values held in TEXT columns stay strings), every other
// shape keeps OpenCode's Session.Info object.
type field struct {
	column string // the session table's column
	path   string // the key in a session object (gjson path)
	json   bool   // the column holds JSON text
}

var (
	fDirectory = field{column: "directory", path: "directory"}
	fProject   = field{column: "project_id", path: "projectID"}
	fParent    = field{column: "parent_id", path: "parentID"}
	fVersion   = field{column: "version", path: "version"}
	fTitle     = field{column: "title", path: "title"}
	fRevert    = field{column: "revert", path: "revert", json: true}
	fCreated   = field{column: "time_created", path: "time.created"}
	fUpdated   = field{column: "time_updated", path: "time.updated"}
	fCost      = field{column: "cost", path: "cost"}
	// fTokens are the session's token totals, in the order of a
	// step-finish part's tokens (tokenPaths).
	fTokens = []field{
		{column: "tokens_input", path: "tokens.input"},
		{column: "tokens_output", path: "tokens.output"},
		{column: "tokens_reasoning", path: "tokens.reasoning"},
		{column: "tokens_cache_read", path: "tokens.cache.read"},
		{column: "tokens_cache_write", path: "tokens.cache.write"},
	}
	tokenPaths = []string{"tokens.input", "tokens.output", "tokens.reasoning", "tokens.cache.read", "tokens.cache.write"}
)

// columns reports whether the session's record is a SQLite row.
func columns(s *store.Session) bool { return s.Store.Shape == store.ShapeSQLite }

// key is the field's key in the session's record (a gjson path).
func (f field) key(s *store.Session) string {
	if columns(s) {
		return f.column
	}
	return f.path
}

// get reads a field of the session's record; a JSON column is parsed.
func get(s *store.Session, f field) gjson.Result {
	if s.Info == nil {
		return gjson.Result{}
	}
	v := s.Info.Get(f.key(s))
	if columns(s) && f.json && v.Type == gjson.String {
		return gjson.Parse(v.Str)
	}
	return v
}

// set returns the session record body with the field set to v (a Go value;
// nil removes the key from a session object and makes a column NULL).
func set(s *store.Session, body []byte, f field, v any) ([]byte, error) {
	if columns(s) {
		if f.json && v != nil {
			b, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			v = string(b)
		}
		return fix.SetJSON(body, v, f.column)
	}
	if v == nil {
		return fix.DeleteJSON(body, f.path), nil
	}
	return fix.SetJSON(body, v, splitPath(f.path)...)
}

// splitPath splits a dotted path of plain keys.
func splitPath(p string) []string {
	var out []string
	start := 0
	for i := 0; i < len(p); i++ {
		if p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}

// Revert is a session's pending revert: OpenCode's /undo records where it
// reverted to and deletes the reverted messages on the next prompt.
type Revert struct {
	// MessageID is the first message reverted; with PartID set, that
	// message keeps its parts before PartID and loses the rest.
	MessageID string `json:"message_id"`
	PartID    string `json:"part_id"`
}

// revertOf returns the session's pending revert, or nil.
func revertOf(s *store.Session) *Revert {
	v := get(s, fRevert)
	if !v.IsObject() || v.Get("messageID").String() == "" {
		return nil
	}
	return &Revert{MessageID: v.Get("messageID").String(), PartID: v.Get("partID").String()}
}

// number formats a JSON number the way OpenCode's JSON.stringify would: an
// integer without a fraction, else the shortest float.
func number(f float64) json.Number {
	if f == float64(int64(f)) {
		return json.Number(strconv.FormatInt(int64(f), 10))
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
}
