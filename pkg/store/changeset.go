package store

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
	// means the writer picks a sensible value.
	Created int64
	// Rule is the finding code the edit repairs; Mutation the mutation that
	// planned it; Reason a lowercase sentence for humans.
	Rule     string
	Mutation string
	Reason   string
}

// ChangeSet is every edit planned for one session.
type ChangeSet struct {
	Store     Info
	SessionID string
	Edits     []Edit
}

// Empty reports whether the change set changes nothing.
func (c *ChangeSet) Empty() bool { return c == nil || len(c.Edits) == 0 }
