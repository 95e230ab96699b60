package plandoc

import (
	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/report"
	"github.com/sessfix/sessfix/pkg/store"
)

// The `sessfix fix --format json` document, which drop, rewind and fork
// print too. Like scan's (report.JSONDocument), these structs are the
// contract documented in docs/json-output.md and checked by fixdoc_test.go:
// snake_case, every field always present, no null.

// FixDocument is the whole `--format json` output of `sessfix fix`.
type FixDocument struct {
	Version       string `json:"version"`
	SchemaVersion int    `json:"schema_version"`
	// Written is true when fix wrote (it may have failed part-way: see
	// the sessions' outcomes); false for a dry run.
	Written  bool         `json:"written"`
	Stores   []FixStore   `json:"stores"`
	Sessions []FixSession `json:"sessions"`
	// Databases are the database repairs (SF501, SF502, SF504) planned or
	// written; absent when there are none (dbdoc.go).
	Databases []FixDatabase `json:"databases,omitempty"`
	Summary   FixTotals     `json:"summary"`
}

// FixStore is one store fix read, or one input it could not open.
type FixStore struct {
	Shape string `json:"shape"`
	Path  string `json:"path"`
	Error string `json:"error"`
	// BackupRun is the backup run of what fix wrote to the store
	// (`sessfix undo RUN`); "" when nothing was written.
	BackupRun string `json:"backup_run"`
}

// FixSession is one session fix has something to say about: a plan,
// findings it leaves, or a reason it was not repaired. Clean sessions are
// left out.
type FixSession struct {
	Store   string `json:"store"`
	Shape   string `json:"shape"`
	ID      string `json:"id"`
	Title   string `json:"title"`
	Outcome string `json:"outcome"`
	Error   string `json:"error"`
	// Forced is true when --force repaired a session the settle policy
	// calls busy.
	Forced bool `json:"forced"`
	// InUse says why the settle policy calls the session busy (a
	// skipped-busy or forced session); "" otherwise.
	InUse     string       `json:"in_use"`
	BackupRun string       `json:"backup_run"`
	Edits     []FixEdit    `json:"edits"`
	Fixed     []FixRepair  `json:"fixed"`
	Unfixed   []FixUnfixed `json:"unfixed"`
	Notes     []string     `json:"notes"`
}

// FixEdit is one edit of a session's plan.
type FixEdit struct {
	Op        string              `json:"op"`
	Kind      string              `json:"kind"`
	Record    string              `json:"record"`
	NewID     string              `json:"new_id"`
	MessageID string              `json:"message_id"`
	Location  report.JSONLocation `json:"location"`
	Rule      string              `json:"rule"`
	Mutation  string              `json:"mutation"`
	Reason    string              `json:"reason"`
}

// FixRepair is a finding the plan repairs.
type FixRepair struct {
	Finding   report.JSONFinding `json:"finding"`
	Strategy  string             `json:"strategy"`
	Mutations string             `json:"mutations"`
	Edits     int                `json:"edits"`
}

// FixUnfixed is a finding the plan leaves.
type FixUnfixed struct {
	Finding report.JSONFinding `json:"finding"`
	Reason  string             `json:"reason"`
	// Failing is true when the finding fails the run (--fail-on).
	Failing bool `json:"failing"`
}

// FixTotals counts the document's sessions and edits.
type FixTotals struct {
	Sessions    int    `json:"sessions"`
	Planned     int    `json:"planned"`
	Applied     int    `json:"applied"`
	SkippedBusy int    `json:"skipped_busy"`
	Failed      int    `json:"failed"`
	Edits       int    `json:"edits"`
	Fixed       int    `json:"fixed"`
	Unfixed     int    `json:"unfixed"`
	FailOn      string `json:"fail_on"`
	Failing     int    `json:"failing"`
}

// FixRun is what a `sessfix fix` run did, for NewFixDocument.
type FixRun struct {
	Version string
	// Written is true when the run wrote (or tried to).
	Written bool
	// Stores are the stores read, and inputs that could not be opened
	// (Info.Shape "" and Err set); Errs and Runs are by store path.
	Stores []store.Info
	Errs   map[string]error
	Runs   map[string]string
	// Sessions are the outcomes to report (clean ones are skipped).
	Sessions []fix.Outcome
	// Databases are the database repairs planned, with their errors by
	// store path in DatabaseErrs.
	Databases    []*fix.DatabaseRepair
	DatabaseErrs map[string]error
	// FailPolicy decides which unfixed findings fail the run.
	cli.FailPolicy
}

// Outcome names, the values of `sessions[].outcome`.
const (
	OutcomePlanned     = "planned"      // changes planned, not written
	OutcomeUnchanged   = "unchanged"    // nothing to change: findings left or notes only
	OutcomeApplied     = "applied"      // written and verified
	OutcomeSkippedBusy = "skipped-busy" // may be in use: not repaired
	OutcomeFailed      = "failed"       // could not be loaded, planned or written
	// OutcomeRefused is a database repair not written because another
	// program holds the database (exit 4): nothing was changed.
	OutcomeRefused = "refused"
)

func outcomeName(o fix.Outcome) string {
	switch o.Status {
	case fix.Applied:
		return OutcomeApplied
	case fix.SkippedBusy:
		return OutcomeSkippedBusy
	case fix.Failed:
		return OutcomeFailed
	case fix.Planned:
		if o.Changes() {
			return OutcomePlanned
		}
	}
	return OutcomeUnchanged
}

// NewFixDocument converts a fix run to its JSON document.
func NewFixDocument(run *FixRun) *FixDocument {
	doc := &FixDocument{
		Version:       run.Version,
		SchemaVersion: report.SchemaVersion,
		Written:       run.Written,
		Stores:        []FixStore{},
		Sessions:      []FixSession{},
		Summary:       FixTotals{FailOn: run.FailOnString()},
	}
	for _, info := range run.Stores {
		fs := FixStore{Shape: string(info.Shape), Path: info.Path, BackupRun: run.Runs[info.Path]}
		if err := run.Errs[info.Path]; err != nil {
			fs.Error = err.Error()
		}
		doc.Stores = append(doc.Stores, fs)
	}
	doc.Databases = databaseDocs(run)
	sum := &doc.Summary
	for _, o := range run.Sessions {
		info := o.Store.Info()
		s := FixSession{
			Store: info.Path, Shape: string(info.Shape), ID: o.ID, Title: o.Title,
			Outcome: outcomeName(o), Forced: o.Forced, InUse: o.Use.Why, BackupRun: o.Run,
			Edits: []FixEdit{}, Fixed: []FixRepair{}, Unfixed: []FixUnfixed{}, Notes: []string{},
		}
		if o.Err != nil {
			s.Error = o.Err.Error()
		}
		if p := o.Plan; p != nil {
			if p.Changes != nil {
				for _, e := range p.Changes.Edits {
					s.Edits = append(s.Edits, FixEdit{
						Op: string(e.Op), Kind: string(e.Kind), Record: e.ID, NewID: e.NewID, MessageID: e.MessageID,
						Location: report.JSONLocation{Path: e.Loc.Path, Line: e.Loc.Line, Table: e.Loc.Table, RowID: e.Loc.RowID},
						Rule:     e.Rule, Mutation: e.Mutation, Reason: e.Reason,
					})
				}
			}
			for _, r := range p.Fixed {
				s.Fixed = append(s.Fixed, FixRepair{Finding: report.NewJSONFinding(r.Finding), Strategy: r.Strategy, Mutations: r.Mutations, Edits: r.Edits})
			}
			for _, u := range p.Unfixed {
				failing := run.Fails(u.Finding)
				s.Unfixed = append(s.Unfixed, FixUnfixed{Finding: report.NewJSONFinding(u.Finding), Reason: u.Reason, Failing: failing})
				if failing {
					sum.Failing++
				}
			}
			s.Notes = append(s.Notes, p.Notes...)
		}
		switch s.Outcome {
		case OutcomePlanned:
			sum.Planned++
		case OutcomeApplied:
			sum.Applied++
		case OutcomeSkippedBusy:
			sum.SkippedBusy++
		case OutcomeFailed:
			sum.Failed++
		}
		sum.Sessions++
		sum.Edits += len(s.Edits)
		sum.Fixed += len(s.Fixed)
		sum.Unfixed += len(s.Unfixed)
		doc.Sessions = append(doc.Sessions, s)
	}
	return doc
}
