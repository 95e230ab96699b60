package store

import "time"

// OpenCode2 is what an OpenCode 2 database says about one session besides
// its records. Such a database keeps OpenCode 1.x's tables (session,
// message, part) next to its own (session_v2, session_message): OpenCode 2
// imports the 1.x sessions once (Import) and from then on reads only its
// own tables, so the 1.x rows are frozen history unless a 1.x client still
// writes them.
type OpenCode2 struct {
	// V2 is true when the session is in OpenCode 2's own tables, and its
	// records are those rows:
	//   - Info is the session_v2 row, as a JSON object of its columns;
	//   - Messages are its session_message rows in seq order: a Message's
	//     Role is the row's type ("user", "assistant", "compaction", ...),
	//     its Raw the data column (a JSON object without id and type), its
	//     Created the time_created column;
	//   - an assistant message's Parts are the items of its content array:
	//     a Part's Type is the item's type, its ID the item's id ("" when it
	//     has none), its Raw the item's bytes; it is located at its
	//     message's row;
	//   - rows and items that are not JSON objects are Broken.
	// False when the session is only in the 1.x tables: the records are
	// those rows, read as in an OpenCode 1.x database.
	V2 bool
	// V1 is the 1.x copy of a V2 session (the rows OpenCode 2 imported it
	// from), read as in a 1.x database, with its own OpenCode2 nil. Nil when
	// the 1.x tables do not hold the session.
	V1 *Session
	// Import is the database's record of OpenCode 2's one-shot import of
	// the 1.x sessions.
	Import Import
	// DirectoryProject is, for a V2 session, the id of a project row other
	// than the session's own whose worktree is the session's directory (the
	// project OpenCode 2 resolved that directory to); "" when there is none.
	DirectoryProject string
}

// The phases of OpenCode 2's import of 1.x sessions.
const (
	// ImportRunning: the import has started and not finished; OpenCode 2
	// resumes it from Cursor at its next start.
	ImportRunning = "sessions"
	// ImportCompleted: every 1.x session was imported; OpenCode 2 never
	// imports again.
	ImportCompleted = "completed"
)

// Import is the kv row `migration.v1-v2` of an OpenCode 2 database.
type Import struct {
	// Phase is ImportRunning, ImportCompleted, or "" when the database holds
	// no record (the import never started: OpenCode 2 starts it when 1.x
	// sessions exist) or one sessfix cannot parse (Raw says what it is).
	Phase string
	// Cursor is the last 1.x session id the import reached while it runs
	// (it walks session ids downwards).
	Cursor string
	// Updated is when the record was last written (its time_updated): the
	// import's completion once Phase is ImportCompleted. Zero without a
	// record.
	Updated time.Time
	// Raw is the record's value as stored; "" without a record.
	Raw string
}

// OpenCode2Refusal is the refusal to write the OpenCode 2 database at
// path, whichever shape is asked (an undo may name the 1.x shape of a
// database OpenCode 2 has since opened).
func OpenCode2Refusal(path string) *ReadOnlyError {
	return &ReadOnlyError{Path: path, Shape: ShapeSQLite2, What: "an OpenCode 2 database",
		Why: "no OpenCode 2 build can be installed to prove a repair of its tables, " +
			"and OpenCode 2 never reads its 1.x tables again once it has imported them"}
}
