package store

import (
	"context"
	"time"
)

// Info describes an opened store.
type Info struct {
	Shape Shape `json:"shape"`
	// Path is what identifies the store: the database file, the storage/ or
	// sessions/ directory, the project tree's storage/ directory, or the
	// export file.
	Path string `json:"path"`
	// Notes are facts worth telling the user (e.g. "pre-migration copy").
	Notes []string `json:"notes,omitempty"`
}

// SessionRef names a session in a store without loading it.
type SessionRef struct {
	ID    string
	Title string
	// Updated is the newest modification time the listing saw (zero if unknown).
	Updated time.Time
	// Key is shape-private data (e.g. the project directory of a session file).
	Key string
}

// Store is one opened session store of any shape. Implementations are safe
// for concurrent Load calls.
type Store interface {
	Info() Info
	// List returns every session in the store, in a stable order (by id),
	// including sessions that only exist through orphaned messages.
	List(ctx context.Context) ([]SessionRef, error)
	// Load reads one session completely.
	Load(ctx context.Context, ref SessionRef) (*Session, error)
	// Activity says what can be seen, from outside, of other programs
	// using the store (OpenCode running on it), looking afresh at every
	// call; ActivityUnknown when the shape or the system cannot tell.
	Activity() Activity
	Close() error
}
