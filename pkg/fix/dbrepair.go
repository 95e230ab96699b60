package fix

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/sqlite/salvage"
)

// A database repair mends a SQLite database as a whole rather than its
// records: a damaged database (SF501) is salvaged into a new file that is
// swapped in, or reindexed in place when only its indexes are damaged;
// an oversized write-ahead log (SF502) is checkpointed; a database that is
// mostly free pages (SF504) is vacuumed, only when the user asks for it
// (VacuumRequested). Each is one
// backup run of the database's files (backup.ApplyDatabase), written in
// the store's Tx, and undone by `sessfix undo RUN` byte for byte.

// The names of the database repairs (scan.Rule.Fix of SF501 and SF502;
// SF504's repair on request).
const (
	MutSalvageDatabase = "salvageDatabase"
	MutReindexDatabase = "reindexDatabase"
	MutCheckpointWAL   = "checkpointWAL"
	MutVacuumDatabase  = "vacuumDatabase"
)

// VacuumRequested reports whether the user asked for SF504's repair, a
// VACUUM: its code named in full in the rule selection (`fix --select
// SF504`, or a config file's select), not by a prefix nor by selecting
// every rule. VACUUM rewrites the whole file and needs free disk space
// the size of the database, for space that hurts nothing: fix never
// makes it unasked.
func VacuumRequested(sopts *scan.Options) bool {
	if sopts == nil || !sopts.Enabled(scan.SF504) {
		return false
	}
	return slices.ContainsFunc(sopts.Select, func(c string) bool { return strings.EqualFold(c, scan.SF504) })
}

// DatabaseRule reports whether fix repairs a rule's findings as a
// database repair (SF501, SF502) rather than by strategies.
func DatabaseRule(code string) bool { return code == scan.SF501 || code == scan.SF502 }

// DatabaseRepair is a database repair planned for one store.
type DatabaseRepair struct {
	Store store.Info
	// Rule is the code of the finding it repairs; Finding the finding.
	Rule    string
	Finding scan.Finding
	// Mutation is MutSalvageDatabase, MutReindexDatabase or
	// MutCheckpointWAL.
	Mutation string
	// Activity is what was seen of other programs using the database when
	// it was planned; anything but store.ActivityNone refuses the write.
	Activity store.Activity
	// Salvage is what the salvage would copy and lose (a dry run's trial
	// into a temporary file), or what it did; nil for the other repairs
	// and when no trial was made.
	Salvage *salvage.Report
	// TrialErr is why the dry run's trial salvage failed.
	TrialErr error
	// Run is the backup run that wrote it.
	Run string
}

// Action is the backup's name of the repair.
func (r *DatabaseRepair) Action() string {
	switch r.Mutation {
	case MutSalvageDatabase:
		return backup.ActionSalvage
	case MutReindexDatabase:
		return backup.ActionReindex
	case MutVacuumDatabase:
		return backup.ActionVacuum
	}
	return backup.ActionCheckpoint
}

// Lost is what a salvage loses, by id, as far as the damaged file still
// names it: the session, message and part rows lost, the sessions with
// rows lost, and whether every lost range could be counted.
type Lost struct {
	Sessions, Messages, Parts []string
	// Affected are the sessions with any row lost.
	Affected []string
	// Rows counts the lost rows of every table; Exact is false when some
	// lost range could not be counted.
	Rows  int
	Exact bool
}

// LostOf reads what a salvage report says was lost.
func LostOf(rep *salvage.Report) Lost {
	l := Lost{Exact: rep.Method == salvage.MethodSQL}
	for _, t := range rep.Tables {
		n, exact := t.LostRows()
		l.Rows += n + len(t.Rejected)
		l.Exact = l.Exact && exact
		var ids []string
		for _, r := range t.Lost {
			ids = append(ids, r.IDs...)
			l.Affected = append(l.Affected, r.SessionIDs...)
		}
		switch t.Name {
		case "session":
			l.Sessions = append(l.Sessions, ids...)
		case "message":
			l.Messages = append(l.Messages, ids...)
		case "part":
			l.Parts = append(l.Parts, ids...)
		}
	}
	l.Affected = append(l.Affected, rep.LostSessions...)
	for _, s := range []*[]string{&l.Sessions, &l.Messages, &l.Parts, &l.Affected} {
		slices.Sort(*s)
		*s = slices.Compact(*s)
	}
	return l
}

// PlanDatabase plans the database repair of st, nil when it needs none:
// SF501 (salvage, or reindex when the check names only indexes) before
// SF502 (checkpoint), each when enabled in sopts, then SF504 (vacuum)
// when VacuumRequested. activity, when set,
// replaces st.Activity. A dry run (trial) salvages into a temporary file
// to report what the salvage would lose.
func PlanDatabase(ctx context.Context, st store.Store, sopts *scan.Options, activity func() store.Activity, trial bool) (*DatabaseRepair, error) {
	var opts scan.Options
	if sopts != nil {
		opts = *sopts
	}
	opts.Deep = false
	h, findings, err := scan.StoreHealth(ctx, st, &opts)
	if err != nil || h == nil {
		return nil, err
	}
	if activity == nil {
		activity = st.Activity
	}
	codes := []string{scan.SF501, scan.SF502}
	if VacuumRequested(sopts) {
		codes = append(codes, scan.SF504)
	}
	for _, code := range codes {
		i := slices.IndexFunc(findings, func(f scan.Finding) bool { return f.Code == code })
		if i < 0 {
			continue
		}
		r := &DatabaseRepair{Store: st.Info(), Rule: code, Finding: findings[i], Mutation: MutCheckpointWAL, Activity: activity()}
		if code == scan.SF504 {
			r.Mutation = MutVacuumDatabase
		}
		if code == scan.SF501 {
			r.Mutation = MutSalvageDatabase
			if h.Unopenable == "" && salvage.IndexOnly(ctx, h.Path, h.Affected) {
				r.Mutation = MutReindexDatabase
			}
			if trial && r.Mutation == MutSalvageDatabase {
				r.Salvage, r.TrialErr = trialSalvage(ctx, h.Path)
			}
		}
		return r, nil
	}
	return nil, nil
}

// trialSalvage salvages the database at path into a temporary file that
// is removed afterwards, for the report.
func trialSalvage(ctx context.Context, path string) (*salvage.Report, error) {
	dir, err := os.MkdirTemp("", "sessfix-salvage-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	return salvage.Salvage(ctx, path, filepath.Join(dir, filepath.Base(path)))
}

// ApplyDatabase writes the database repair r in one backup run of its
// own, under the transaction's writer lock, and returns the run. It
// refuses, changing nothing, while another program has the database open
// (a *backup.DatabaseInUseError, store.ErrLocked). A reindex that fails
// is put back and the database salvaged instead. A dry run writes
// nothing.
func (tx *Tx) ApplyDatabase(ctx context.Context, r *DatabaseRepair, activity func() store.Activity) (string, error) {
	if tx.b.DryRun() {
		return "", nil
	}
	if activity == nil {
		activity = tx.st.Activity
	}
	ch := backup.DatabaseChange{Action: r.Action(), Rule: r.Rule, Activity: activity}
	switch r.Mutation {
	case MutSalvageDatabase:
		ch.Write = func(ctx context.Context, path, dst string) error {
			rep, err := salvage.Salvage(ctx, path, dst)
			if err == nil {
				r.Salvage = rep
			}
			return err
		}
	case MutReindexDatabase:
		ch.Write = func(ctx context.Context, path, _ string) error { return salvage.Reindex(ctx, path) }
	case MutVacuumDatabase:
		ch.Write = func(ctx context.Context, path, _ string) error { return salvage.Vacuum(ctx, path) }
	default:
		ch.Write = func(ctx context.Context, path, _ string) error { return salvage.Checkpoint(ctx, path) }
	}
	run, err := tx.b.ApplyDatabase(context.WithoutCancel(ctx), ch)
	if err != nil && r.Mutation == MutReindexDatabase && !errors.Is(err, store.ErrLocked) && ctx.Err() == nil {
		// The reindex was put back: salvage instead, in a run of its own.
		r.Mutation = MutSalvageDatabase
		srun, serr := tx.ApplyDatabase(ctx, r, activity)
		if serr != nil {
			return srun, fmt.Errorf("reindex failed (%v), and so did the salvage: %w", err, serr)
		}
		return srun, nil
	}
	r.Run = run
	if err != nil {
		return run, fmt.Errorf("cannot repair the database %s: %w", r.Store.Path, err)
	}
	return run, nil
}

// Describe says in one line what the repair does (or would do), for the
// plan on stdout.
func (r *DatabaseRepair) Describe() string {
	var b strings.Builder
	switch r.Mutation {
	case MutSalvageDatabase:
		b.WriteString("salvage the damaged database into a new file and swap it in (salvageDatabase)")
	case MutReindexDatabase:
		b.WriteString("rebuild the damaged indexes in place (reindexDatabase)")
	case MutVacuumDatabase:
		b.WriteString("rewrite the database without its free pages (vacuumDatabase)")
	default:
		b.WriteString("fold the write-ahead log into the database and truncate it (checkpointWAL)")
	}
	fmt.Fprintf(&b, " for %s: %s", r.Rule, r.Finding.Message)
	return b.String()
}

// LossLine says what the salvage loses (or would), "" when it was not run.
func (r *DatabaseRepair) LossLine() string {
	if r.TrialErr != nil {
		return "the trial salvage failed: " + r.TrialErr.Error()
	}
	if r.Salvage == nil {
		return ""
	}
	l := LostOf(r.Salvage)
	var read []string
	for _, name := range []string{"session", "message", "part"} {
		if t := r.Salvage.Table(name); t != nil {
			read = append(read, fmt.Sprintf("%d %s rows", t.Read, name))
		}
	}
	recovers := "the salvage recovers " + strings.Join(read, ", ")
	switch {
	case r.Salvage.Whole():
		return recovers + " and loses nothing: every row was read"
	case r.Salvage.Method == salvage.MethodPages:
		recovers += " from the raw pages (sqlite_master could not be read)"
		if l.Rows == 0 {
			return recovers + "; what the lost pages held cannot be counted"
		}
	}
	count := fmt.Sprintf("%d rows", l.Rows)
	if !l.Exact {
		count = "at least " + count + " (some lost ranges could not be counted)"
	}
	parts := []string{recovers, "it loses " + count}
	for _, k := range []struct {
		what string
		ids  []string
	}{{"sessions", l.Sessions}, {"messages", l.Messages}, {"parts", l.Parts}, {"rows of sessions", l.Affected}} {
		if len(k.ids) > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", k.what, strings.Join(k.ids, ", ")))
		}
	}
	return strings.Join(parts, "; ")
}
