package salvage

import (
	"math"
	"slices"
)

// Method is how the damaged database was read.
type Method string

const (
	// MethodSQL read the schema from sqlite_master and the rows through
	// SQLite.
	MethodSQL Method = "sql"
	// MethodPages read the raw pages: sqlite_master could not be read.
	MethodPages Method = "pages"
)

// Report says what Salvage copied and what it could not.
type Report struct {
	// Source and Dest are the paths Salvage was given.
	Source, Dest string
	// Method is how Source was read.
	Method Method
	// Tables are the tables copied, in the order they were created.
	Tables []TableReport
	// Skipped are schema entries not recreated in Dest, each with why.
	Skipped []string
	// MissingSessions are session ids that rows of message, part or
	// another table of Dest name but that have no session row: the session
	// row was lost, its history was not.
	MissingSessions []string
	// LostSessions are the sessions with lost rows, as far as the rows'
	// ids can still be read (intact indexes, surviving rows), sorted.
	LostSessions []string
	// Unplaced is how many rows the page scan decoded but could not give
	// to a table (MethodPages only).
	Unplaced int
	// Notes say what else a user should know (how the source was opened,
	// a schema taken from the embedded copy, ...).
	Notes []string
	// Integrity is Dest's integrity_check result: "ok".
	Integrity string
}

// TableReport is one table's copy.
type TableReport struct {
	Name string
	// Read is how many rows were copied.
	Read int64
	// Lost are the rowid ranges that could not be read.
	Lost []Range
	// Rejected are rowids read but refused by Dest's constraints (a
	// duplicate key or a NOT NULL column read as null from a damaged page).
	Rejected []int64
}

// Range is a range of rowids whose rows could not be read.
type Range struct {
	// From and To are the first and last rowid of the range (To is
	// math.MaxInt64 when nothing after From could be read).
	From, To int64
	// Rows is how many rows the range held, as an intact index counts
	// them; -1 when no index of the table could be read.
	Rows int
	// FromPages is how many of them were found in the raw pages (a leaf
	// under a damaged interior page) and copied after all.
	FromPages int
	// IDs are the lost rows' id column values; SessionIDs and MessageIDs
	// the sessions and messages they belong to (their own id for session
	// and message rows); all as far as an intact index still holds them,
	// and without the rows FromPages found.
	IDs, SessionIDs, MessageIDs []string
}

// LostRows is how many rows the table lost (the rows of its lost ranges
// less those found in the raw pages) as far as indexes count them, and
// whether every lost range was counted.
func (t TableReport) LostRows() (n int, exact bool) {
	exact = true
	for _, r := range t.Lost {
		if r.Rows < 0 {
			exact = false
			continue
		}
		n += max(r.Rows-r.FromPages, 0)
	}
	return n, exact
}

// Table is the report of the table named name, or nil.
func (r *Report) Table(name string) *TableReport {
	for i := range r.Tables {
		if r.Tables[i].Name == name {
			return &r.Tables[i]
		}
	}
	return nil
}

// Whole reports whether nothing was lost, rejected or skipped. A page
// scan is never whole: what it did not find cannot be counted.
func (r *Report) Whole() bool {
	if r.Method == MethodPages {
		return false
	}
	for _, t := range r.Tables {
		if n, exact := t.LostRows(); n > 0 || !exact || len(t.Rejected) > 0 {
			return false
		}
	}
	return len(r.Skipped) == 0 && len(r.MissingSessions) == 0
}

// openEnded is To of a range that reaches past the last readable row.
const openEnded = math.MaxInt64

func sortedUnique(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}
