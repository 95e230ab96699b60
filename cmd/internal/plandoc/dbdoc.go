package plandoc

import (
	"errors"
	"fmt"
	"io"

	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/report"
	"github.com/sessfix/sessfix/pkg/store"
)

// FixDatabase is one database repair in fix's JSON document: what it
// does, and for a salvage what it loses (or, planned, would lose: a dry
// run's trial salvage into a temporary file), by id.
type FixDatabase struct {
	Store string `json:"store"`
	// Rule is SF501, SF502 or SF504; Mutation salvageDatabase, reindexDatabase,
	// checkpointWAL or vacuumDatabase.
	Rule     string             `json:"rule"`
	Mutation string             `json:"mutation"`
	Finding  report.JSONFinding `json:"finding"`
	// Outcome is planned, applied, failed or refused.
	Outcome   string `json:"outcome"`
	Error     string `json:"error"`
	BackupRun string `json:"backup_run"`
	// Lost is what the salvage loses; absent for the other repairs.
	Lost *FixLost `json:"lost,omitempty"`
}

// FixLost is what a salvage loses: the session, message and part rows by
// id (as far as the damaged file still names them), the sessions with any
// row lost, the rows lost in all, and whether that count is exact.
type FixLost struct {
	Sessions []string `json:"sessions"`
	Messages []string `json:"messages"`
	Parts    []string `json:"parts"`
	Affected []string `json:"affected_sessions"`
	Rows     int      `json:"rows"`
	Exact    bool     `json:"exact"`
	// Method is how the damaged file was read: "sql" or "pages".
	Method string `json:"method"`
}

func databaseDocs(run *FixRun) []FixDatabase {
	var out []FixDatabase
	for _, r := range run.Databases {
		d := FixDatabase{Store: r.Store.Path, Rule: r.Rule, Mutation: r.Mutation, Finding: report.NewJSONFinding(r.Finding),
			Outcome: OutcomePlanned, BackupRun: r.Run}
		err := run.DatabaseErrs[r.Store.Path]
		switch {
		case err != nil && r.Run == "" && errors.Is(err, store.ErrLocked):
			// Another program holds the database: nothing was written.
			d.Outcome, d.Error = OutcomeRefused, err.Error()
		case err != nil:
			d.Outcome, d.Error = OutcomeFailed, err.Error()
		case r.Run != "":
			d.Outcome = OutcomeApplied
		}
		if r.Salvage != nil {
			l := fix.LostOf(r.Salvage)
			d.Lost = &FixLost{Sessions: nonNil(l.Sessions), Messages: nonNil(l.Messages), Parts: nonNil(l.Parts),
				Affected: nonNil(l.Affected), Rows: l.Rows, Exact: l.Exact, Method: string(r.Salvage.Method)}
		}
		out = append(out, d)
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// WriteDatabases prints the database repairs, one paragraph each: what
// is done, and what a salvage loses.
func WriteDatabases(w io.Writer, rs []*fix.DatabaseRepair) error {
	for _, r := range rs {
		if _, err := fmt.Fprintf(w, "database %s\n  %s\n", r.Store.Path, r.Describe()); err != nil {
			return err
		}
		if line := r.LossLine(); line != "" {
			if _, err := fmt.Fprintf(w, "  %s\n", line); err != nil {
				return err
			}
		}
	}
	return nil
}
