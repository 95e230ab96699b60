package watch

import (
	"time"

	"github.com/sessfix/sessfix/pkg/store"
)

// Kind says what happened to a session.
type Kind string

// Event kinds. Repaired, WouldRepair, SkippedBusy, Unfixed and Failed are
// the ones that matter; the rest are for --verbose.
const (
	// Repaired: a repair was written and verified; Backup names the run.
	Repaired Kind = "repaired"
	// WouldRepair: with DryRun, the repair that would have been written.
	WouldRepair Kind = "would-repair"
	// SkippedBusy: the session may be in use (an unfinished assistant
	// message in a store another process has open) and has findings
	// besides those of the turn in progress; it is examined again when
	// the abandon window has passed.
	SkippedBusy Kind = "skipped-busy"
	// Unfixed: findings sessfix cannot repair remain (reported once per
	// content of the session).
	Unfixed Kind = "unfixed"
	// Failed: the session could not be read, planned, written or verified.
	Failed Kind = "failed"

	// Started: the watcher has scanned the stores and follows changes.
	Started Kind = "started"
	// Stopped: the watcher stopped (context cancelled).
	Stopped Kind = "stopped"
	// Rescan: every session of a store is examined again (event queue
	// overflow, or a directory that appeared).
	Rescan Kind = "rescan"
	// Checked: a settled session was examined and needs nothing.
	Checked Kind = "checked"
	// Waiting: the writer lock is held by another sessfix, a record
	// changed while the repair was written, or the session is in the
	// middle of a turn with nothing else wrong; the session is retried.
	Waiting Kind = "waiting"
	// Warning: something the user should know that concerns no session
	// (a directory that cannot be watched, a watcher error, a store that
	// was replaced or is gone, no store yet to watch).
	Warning Kind = "warning"
	// StoreFound: a store appeared after watch started (OpenCode's first
	// run, a migration creating its database, a store that was gone and
	// came back) and is followed from now on; every session of it is
	// examined.
	StoreFound Kind = "store-found"
)

// Matters reports whether the event is one of those printed without
// --verbose.
func (k Kind) Matters() bool {
	switch k {
	case Repaired, WouldRepair, SkippedBusy, Unfixed, Failed, Warning, StoreFound:
		return true
	}
	return false
}

// Event is one thing the watcher reports. Field names are the JSON Lines
// contract of `sessfix watch --format json`.
type Event struct {
	Time  time.Time `json:"time"`
	Kind  Kind      `json:"event"`
	Store *StoreRef `json:"store,omitempty"`
	// Session and Title name the session (empty for store-wide events).
	Session string `json:"session,omitempty"`
	Title   string `json:"title,omitempty"`
	// Rules are the codes of the findings repaired (Repaired,
	// WouldRepair) or left (SkippedBusy, Unfixed), sorted.
	Rules []string `json:"rules,omitempty"`
	// Edits is the number of edits written or planned.
	Edits int `json:"edits,omitempty"`
	// Backup is the backup run id of a repair: `sessfix undo BACKUP`.
	Backup string `json:"backup,omitempty"`
	// Message is a lowercase sentence for humans.
	Message string `json:"message,omitempty"`
	// Error is set on Failed and Warning events.
	Error string `json:"error,omitempty"`
}

// StoreRef names the store an event concerns: the `store` object of the
// JSON Lines.
type StoreRef struct {
	Shape store.Shape `json:"shape"`
	Path  string      `json:"path"`
	// Notes are facts about the store worth telling the user (read from a
	// snapshot copy, ...): always an array, empty when there are none.
	Notes []string `json:"notes"`
}

// refOf is the StoreRef of a store.
func refOf(info store.Info) *StoreRef {
	return &StoreRef{Shape: info.Shape, Path: info.Path, Notes: append([]string{}, info.Notes...)}
}
