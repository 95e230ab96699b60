package undo

import (
	"errors"
	"strings"

	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/report"
	"github.com/sessfix/sessfix/pkg/store"
)

// UndoDocument is the `sessfix undo --format json` output, part of the
// contract in docs/json-output.md like fix's (plandoc.FixDocument) and
// checked by document_test.go.
type UndoDocument struct {
	Version       string `json:"version"`
	SchemaVersion int    `json:"schema_version"`
	// UndoRun's fields, at the top level: the newest run's run and store,
	// the worst outcome, and what every run put back or refused.
	UndoRun
	// Operation is the sessfix command whose runs were undone (every run
	// one fix wrote over several stores shares it); "" when no run was
	// found.
	Operation string `json:"operation"`
	// Runs are the runs undone, newest first, each with what it put
	// back: one for `undo RUN`, every run of the operation for --last.
	// The fields above sum them up.
	Runs []UndoRun `json:"runs"`
}

// UndoRun is what undo did to one run.
type UndoRun struct {
	Run     string    `json:"run"`
	Store   UndoStore `json:"store"`
	Outcome string    `json:"outcome"`
	Error   string    `json:"error"`
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
	OutcomeFailed        = "failed"         // the undo could not be done; see error
	// OutcomeUnreadable is a run whose manifest cannot be read: not
	// undone, and not counted in the document's outcome (a warning).
	OutcomeUnreadable = "unreadable"
)

// NewUndoDocument converts what `sessfix undo RUN` did to its JSON
// document: res may be nil when err says why there is nothing to report
// but the error; run names the run asked for.
func NewUndoDocument(version, run string, res *backup.UndoResult, force bool, err error) *UndoDocument {
	op := ""
	if res != nil {
		run, op = res.RunID, res.Operation
	}
	return NewUndoOperationDocument(version, op, []UndoneRun{{Run: run, Result: res, Err: err}}, force)
}

// UndoneRun is one run undo tried, with its result and error.
type UndoneRun struct {
	Run    string
	Result *backup.UndoResult
	Err    error
	// Unreadable says the run's manifest cannot be read (Err says why):
	// undo --last passed it over.
	Unreadable bool
}

// NewUndoOperationDocument converts what `sessfix undo --last` did to the
// runs of operation op (newest first) to the undo document: the top-level
// fields name the newest run and sum up every run; the worst outcome wins.
// A run entry with neither Run nor Result (nothing was found to undo)
// gives its error and outcome to the document but no entry in runs.
func NewUndoOperationDocument(version, op string, runs []UndoneRun, force bool) *UndoDocument {
	doc := &UndoDocument{Version: version, SchemaVersion: report.SchemaVersion, Operation: op, Runs: []UndoRun{},
		UndoRun: UndoRun{Restored: []UndoRecord{}, Refused: []UndoRefusal{}}}
	var errs []string
	first := true
	for _, u := range runs {
		r := newUndoRun(u, force)
		if u.Unreadable {
			doc.Runs = append(doc.Runs, r)
			continue
		}
		if first {
			first = false
			doc.Run, doc.Store, doc.Outcome = r.Run, r.Store, r.Outcome
		}
		if outcomeRank[r.Outcome] > outcomeRank[doc.Outcome] {
			doc.Outcome = r.Outcome
		}
		doc.Restored = append(doc.Restored, r.Restored...)
		doc.Refused = append(doc.Refused, r.Refused...)
		doc.Unchanged += r.Unchanged
		doc.Forced = doc.Forced || r.Forced
		if r.Error != "" {
			errs = append(errs, r.Error)
		}
		if u.Run != "" || u.Result != nil {
			doc.Runs = append(doc.Runs, r)
		}
	}
	doc.Error = strings.Join(errs, "\n")
	if doc.Outcome == "" {
		doc.Outcome = OutcomeAlreadyUndone
	}
	return doc
}

// outcomeRank orders outcomes: the document's is its runs' worst.
var outcomeRank = map[string]int{OutcomeAlreadyUndone: 1, OutcomeUndone: 2, OutcomeRefused: 3, OutcomeFailed: 4}

func newUndoRun(u UndoneRun, force bool) UndoRun {
	r := UndoRun{Run: u.Run, Restored: []UndoRecord{}, Refused: []UndoRefusal{}}
	if res := u.Result; res != nil {
		r.Run = res.RunID
		r.Store.Shape, r.Store.Path = string(res.Store.Shape), res.Store.Path
		for _, t := range res.Restored {
			r.Restored = append(r.Restored, undoRecord(t))
		}
		r.Unchanged = res.Unchanged
		for _, rf := range res.Refused {
			r.Refused = append(r.Refused, UndoRefusal{Record: undoRecord(rf.Target), Reason: rf.Reason})
		}
		r.Forced = force && len(res.Refused) > 0
	}
	var refused *backup.RefusedError
	switch err := u.Err; {
	case u.Unreadable:
		r.Outcome = OutcomeUnreadable
	case errors.As(err, &refused):
		r.Outcome = OutcomeRefused
	case errors.Is(err, backup.ErrAllUndone):
		r.Outcome = OutcomeAlreadyUndone
	case err != nil:
		r.Outcome = OutcomeFailed
	case u.Result != nil && u.Result.AlreadyUndone:
		r.Outcome = OutcomeAlreadyUndone
	default:
		r.Outcome = OutcomeUndone
	}
	if u.Err != nil && !errors.Is(u.Err, backup.ErrAllUndone) {
		r.Error = u.Err.Error()
	}
	return r
}

func undoRecord(t store.Target) UndoRecord {
	return UndoRecord{Kind: string(t.Kind), ID: t.ID, Path: t.Path, Table: t.Table}
}
