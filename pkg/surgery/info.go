package surgery

import (
	"github.com/tidwall/gjson"

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
	fRevert    = field{column: "revert", path: "revert", json: true}
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
