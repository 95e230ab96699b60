package store

import (
	"context"
	"strings"
)

// Health is what a store's own file says about the database as a whole,
// apart from any session: SQLite's integrity check, the size of its
// write-ahead log, its free pages, its oversized records. The store-health
// rules (SF5xx) read it. Reading it never writes the store.
type Health struct {
	// Path is the database file.
	Path string
	// Check is the SQLite check that ran: "quick_check" or
	// "integrity_check"; "" when none could.
	Check string
	// Problems are the check's report lines (at most ten), or the error
	// that stopped it; nil when the database passed.
	Problems []string
	// Affected are the tables and indexes the problems name, sorted.
	Affected []string
	// Unopenable is the error that kept SQL from opening the file at all
	// (its schema is unreadable); "" when it opened.
	Unopenable string
	// Size and WALSize are the database file's and its -wal file's sizes
	// in bytes (WALSize 0 when there is none).
	Size, WALSize int64
	// HeaderSize is the size the file's header gives (page size times its
	// page count); larger than Size when the file was truncated.
	HeaderSize int64
	// PageSize, PageCount and FreePages are SQLite's page_size,
	// page_count and freelist_count (0 when unknown).
	PageSize, PageCount, FreePages int64
	// Oversized are the part rows whose data is at least the threshold
	// HealthOptions.Oversized asked about, largest first.
	Oversized []Oversized
}

// Damaged reports whether the check found damage or the file could not be
// opened.
func (h *Health) Damaged() bool { return h != nil && (len(h.Problems) > 0 || h.Unopenable != "") }

// Oversized is one part row whose data is large, measured without reading
// it.
type Oversized struct {
	SessionID, MessageID, PartID string
	Bytes                        int64
	Loc                          Location
}

// HealthOptions say what HealthChecker.Health looks at.
type HealthOptions struct {
	// Deep runs SQLite's full integrity_check (indexes against their
	// tables too) instead of quick_check.
	Deep bool
	// Oversized is the data size, in bytes, at which a part row is listed
	// in Health.Oversized; 0 lists none.
	Oversized int64
}

// DamageCommand is the command a user runs to see the damage of the
// database at path: sessfix's full check of it (the store-health rule
// SF501 with --deep, SQLite's integrity_check), which needs no sqlite3
// shell.
func DamageCommand(path string) string {
	if strings.HasPrefix(path, "-") {
		path = "./" + path // a file name, not a flag
	}
	return "sessfix scan --deep --select SF501 " + ShellArg(path)
}

// HealthChecker is a store that can report its database's health (the
// SQLite shapes).
type HealthChecker interface {
	Health(ctx context.Context, opts HealthOptions) (*Health, error)
}

// HealthOf returns the store's HealthChecker, looking through wrappers
// that name the store they wrap with an Unwrap() Store method.
func HealthOf(st Store) (HealthChecker, bool) {
	for st != nil {
		if hc, ok := st.(HealthChecker); ok {
			return hc, true
		}
		u, ok := st.(interface{ Unwrap() Store })
		if !ok {
			return nil, false
		}
		st = u.Unwrap()
	}
	return nil, false
}
