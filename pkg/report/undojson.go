package report

import (
	"errors"

	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
)

// UndoDocument is the `sessfix undo --format json` output, part of the
// contract in docs/json-output.md like FixDocument.
type UndoDocument struct {
	Version       string    `json:"version"`
	SchemaVersion int       `json:"schema_version"`
	Run           string    `json:"run"`
	Store         UndoStore `json:"store"`
	Outcome       string    `json:"outcome"`
	Error         string    `json:"error"`
	// Forced is true when --force put records back over later changes.
	Forced    bool          `json:"forced"`
	Restored  []UndoRecord  `json:"restored"`
	Unchanged int           `json:"unchanged"`
	Refused   []UndoRefusal `json:"refused"`
}

// UndoStore is the store the run changed.
type UndoStore struct {
	Shape string `json:"shape"`
	Path  string `json:"path"`
}

// UndoRecord is a file, or a row of a database, that undo put back.
type UndoRecord struct {
	Kind  string `json:"kind"`
	ID    string `json:"id"`
	Path  string `json:"path"`
	Table string `json:"table"`
}

// UndoRefusal is a record that changed after the run wrote it.
type UndoRefusal struct {
	Record UndoRecord `json:"record"`
	Reason string     `json:"reason"`
}

// Undo outcomes, the values of `outcome`.
const (
	OutcomeUndone        = "undone"         // the run's records were put back
	OutcomeAlreadyUndone = "already-undone" // nothing to do
	OutcomeRefused       = "refused"        // records changed since; nothing was restored
	// OutcomeFailed ("failed"): the undo could not be done; see error.
)

// NewUndoDocument converts what `sessfix undo` did to its JSON document:
// res may be nil when err says why there is nothing to report but the
// error; run names the run asked for.
func NewUndoDocument(version, run string, res *backup.UndoResult, force bool, err error) *UndoDocument {
	doc := &UndoDocument{Version: version, SchemaVersion: SchemaVersion, Run: run, Restored: []UndoRecord{}, Refused: []UndoRefusal{}}
	if res != nil {
		doc.Run = res.RunID
		doc.Store.Shape, doc.Store.Path = string(res.Store.Shape), res.Store.Path
		for _, t := range res.Restored {
			doc.Restored = append(doc.Restored, undoRecord(t))
		}
		doc.Unchanged = res.Unchanged
		for _, r := range res.Refused {
			doc.Refused = append(doc.Refused, UndoRefusal{Record: undoRecord(r.Target), Reason: r.Reason})
		}
		doc.Forced = force && len(res.Refused) > 0
	}
	var refused *backup.RefusedError
	switch {
	case errors.As(err, &refused):
		doc.Outcome = OutcomeRefused
	case err != nil:
		doc.Outcome = OutcomeFailed
	case res != nil && res.AlreadyUndone:
		doc.Outcome = OutcomeAlreadyUndone
	default:
		doc.Outcome = OutcomeUndone
	}
	if err != nil {
		doc.Error = err.Error()
	}
	return doc
}

func undoRecord(t store.Target) UndoRecord {
	return UndoRecord{Kind: string(t.Kind), ID: t.ID, Path: t.Path, Table: t.Table}
}
