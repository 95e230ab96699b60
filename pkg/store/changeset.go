package store

import (
	"errors"
	"fmt"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// Op is what an edit does to one record.
type Op string

// Edit operations.
const (
	OpUpdate     Op = "update"     // replace an existing record's body: Before → After
	OpAdd        Op = "add"        // create a new record with After as its body
	OpDelete     Op = "delete"     // remove a record (its Before is backed up first)
	OpQuarantine Op = "quarantine" // move an unreadable record out of the store, into the backup
	OpRekey      Op = "rekey"      // give a record a new id (NewID) at the same position; body After
)

// Edit is one planned change to one record. Edits are data: computed before
// anything is written, printed as a diff by --dry-run, applied by a Writer,
// and recorded in the backup journal.
type Edit struct {
	Op   Op
	Kind Kind
	// ID is the record's id (for OpAdd, the newly minted id).
	ID string
	// NewID is the new id for OpRekey.
	NewID string
	// SessionID and MessageID are the parents: a part's message and session,
	// a message's session.
	SessionID string
	MessageID string
	// Loc is where the existing record lives (all ops but OpAdd). Writers
	// fill it for OpAdd once written.
	Loc Location
	// Before is the exact current body; writers refuse to apply an edit whose
	// record no longer has these bytes.
	Before []byte
	// After is the new body, already in the store's own formatting (pretty
	// 2-space JSON for JSON files, compact for SQLite data columns).
	After []byte
	// Created is the time_created to give a new SQLite row (epoch ms); zero
	// means the writer picks a sensible value: now for a message or part
	// row, the body's time_created for a session row (which a session body
	// must then carry).
	Created int64
	// Rule is the finding code the edit repairs; Mutation the mutation that
	// planned it; Reason a lowercase sentence for humans.
	Rule     string
	Mutation string
	Reason   string
	// Payload, when set, is media the edit moves out of the record: the
	// backup run keeps it as a file of its own (payloads/Name, decoded),
	// besides the record's own backup, before the record is changed.
	Payload *Payload
}

// PayloadName is name made safe as a file name in a backup run: letters,
// digits, '.', '_' and '-' only (others become '_'), never starting with
// a dot.
func PayloadName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] == '.' {
		b = append([]byte("_"), b...)
	}
	return string(b)
}

// Payload is media an edit moves out of a record: its file name in the
// backup run and its base64 (a slice of the edit's Before, not a copy).
type Payload struct {
	Name   string
	Base64 []byte
}

// ChangeSet is every edit planned for one session.
type ChangeSet struct {
	Store     Info
	SessionID string
	Edits     []Edit
}

// Empty reports whether the change set changes nothing.
func (c *ChangeSet) Empty() bool { return c == nil || len(c.Edits) == 0 }

// Check validates what every shape's writer requires of a change set, so
// that a malformed one is refused before anything is read or written.
func (cs *ChangeSet) Check() error {
	if cs == nil {
		return nil
	}
	for i, e := range cs.Edits {
		name := fmt.Sprintf("edit %d (%s %s %s)", i+1, e.Op, e.Kind, e.ID)
		if e.ID == "" {
			return fmt.Errorf("%s: no record id; the change set is malformed", name)
		}
		switch e.Kind {
		case KindSession, KindMessage, KindPart:
		default:
			return fmt.Errorf("%s: unknown record kind %q", name, e.Kind)
		}
		switch e.Op {
		case OpUpdate, OpAdd:
			if !gjson.ValidBytes(e.After) || len(e.After) == 0 {
				return fmt.Errorf("%s: the new body is not valid JSON; nothing was written", name)
			}
		case OpRekey:
			if e.NewID == "" || e.NewID == e.ID {
				return fmt.Errorf("%s: re-key without a new id", name)
			}
			if !ValidID(e.NewID, PrefixFor(e.Kind)) {
				return fmt.Errorf("%s: new id %q is not in OpenCode's format", name, e.NewID)
			}
			if len(e.After) > 0 && !gjson.ValidBytes(e.After) {
				return fmt.Errorf("%s: the new body is not valid JSON; nothing was written", name)
			}
		case OpDelete, OpQuarantine:
		default:
			return fmt.Errorf("%s: unknown operation %q", name, e.Op)
		}
		if e.Op == OpAdd && !ValidID(e.ID, PrefixFor(e.Kind)) {
			return fmt.Errorf("%s: new id %q is not in OpenCode's format", name, e.ID)
		}
	}
	return nil
}

// RekeyedBody is the body an OpRekey edit gives its record, whose current
// body is cur: After when the planner set one, else cur with a top-level
// "id" holding the old id rewritten to NewID (every other byte kept). A
// record whose "id" holds something else keeps its body.
func (e *Edit) RekeyedBody(cur []byte) ([]byte, error) {
	if len(e.After) > 0 {
		return e.After, nil
	}
	if !gjson.ValidBytes(cur) {
		return nil, errors.New("the body is not valid JSON")
	}
	if v := gjson.GetBytes(cur, "id"); v.Type != gjson.String || v.Str != e.ID {
		return cur, nil
	}
	return sjson.SetBytes(cur, "id", e.NewID)
}
