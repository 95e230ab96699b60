package fix

import (
	"context"
	"errors"
	"fmt"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/plandoc"
	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

// Database repairs (SF501, SF502; SF504 on request): a database is salvaged, reindexed, vacuumed or
// checkpointed as a whole, in a backup run of its own, before any session
// of it is planned or written (pkg/fix's dbrepair.go).

// planDatabases plans the database repair of each store and returns the
// stores whose sessions are planned as usual: a store to salvage or
// reindex is not (its rows are read again once it is whole: run fix
// again); one to checkpoint is. A run that writes stops with a
// *backup.DatabaseInUseError (exit 4), nothing changed, when another
// program has a database to repair open; a dry run warns. With --session
// no database repair is planned (sessionsOnly).
func (r *fixRun) planDatabases(ctx context.Context, stores []store.Store) ([]store.Store, error) {
	if len(r.opts.Sessions) > 0 {
		return r.sessionsOnly(ctx, stores)
	}
	ios := r.opts.Factory.IOStreams
	var out []store.Store
	for _, st := range stores {
		rep, err := fix.PlanDatabase(ctx, st, r.pipe.Scan, r.activityOf(st), !r.flow.Mode().Writes())
		if err != nil {
			r.storeErrs[st.Info().Path] = err
			continue
		}
		if rep == nil {
			out = append(out, st)
			continue
		}
		if a := rep.Activity; a.State != store.ActivityNone && a.State != store.ActivityNever {
			inUse := &backup.DatabaseInUseError{Path: rep.Store.Path, Activity: a}
			if r.flow.Mode().Writes() {
				r.dbs = append(r.dbs, rep)
				r.dbStores = append(r.dbStores, st)
				r.dbErrs[rep.Store.Path] = inUse
				return nil, r.refuse(rep.Store.Path, inUse)
			}
			ios.Statusf("warning: %v", inUse)
		}
		r.dbs = append(r.dbs, rep)
		r.dbStores = append(r.dbStores, st)
		if rep.Mutation == fix.MutCheckpointWAL {
			out = append(out, st)
		} else {
			ios.Statusf("database %s is planned as a whole (%s); run fix again after it to plan its sessions", rep.Store.Path, rep.Mutation)
		}
	}
	return out, nil
}

// activityOf is what is seen of other programs using st: --activity's
// seam in tests, else the store's own.
func (r *fixRun) activityOf(st store.Store) func() store.Activity {
	if r.opts.Activity != nil {
		return func() store.Activity { return r.opts.Activity(st.Info()) }
	}
	return st.Activity
}

// showDatabases prints the planned database repairs after the sessions'
// plans (text only: --format json has them in its document).
func (r *fixRun) showDatabases() error {
	if len(r.dbs) == 0 || r.opts.Factory.Format() == "json" {
		if len(r.dbs) > 0 && r.flow.Mode().Writes() {
			_ = plandoc.WriteDatabases(r.opts.Factory.IOStreams.ErrOut, r.dbs)
		}
		return nil
	}
	out, err := r.flow.Output()
	if err != nil {
		return err
	}
	return plandoc.WriteDatabases(out.W, r.dbs)
}

// databaseWhat is what the question names of the database repairs: "the
// salvage of 1 database".
func (r *fixRun) databaseWhat() string {
	if len(r.dbs) == 0 {
		return ""
	}
	return fmt.Sprintf("a database repair of %s", plural.Count(len(r.dbs), "database", "databases"))
}

// applyDatabases writes each planned database repair in its store's
// transaction. A database another program holds stops the run (exit 4);
// another failure is the store's, and the others go on.
func (r *fixRun) applyDatabases(ctx context.Context) ([]string, error) {
	ios := r.opts.Factory.IOStreams
	var runs []string
	for i, rep := range r.dbs {
		st := r.dbStores[i]
		tx := r.flow.Tx(st)
		if tx == nil {
			r.dbErrs[rep.Store.Path] = fmt.Errorf("database %s: no write transaction (its lock could not be taken)", rep.Store.Path)
			continue
		}
		run, err := tx.ApplyDatabase(ctx, rep, r.activityOf(st))
		if err != nil {
			if run != "" {
				err = r.flow.Failed(err, run)
			}
			r.dbErrs[rep.Store.Path] = err
			if errors.Is(err, store.ErrLocked) {
				return runs, err
			}
			continue
		}
		runs = append(runs, run)
		ios.Statusf("repaired database %s (%s)", rep.Store.Path, rep.Mutation)
		if line := rep.LossLine(); line != "" {
			ios.Statusf("%s", line)
		}
	}
	return runs, nil
}

// sessionsOnly returns the stores a `fix --session` run plans: a store
// whose database is damaged (SF501) is not planned, dry run or not. A
// repair of one session would be written into a damaged file, and the
// salvage is of the database as a whole, which --session does not ask
// for: the store's error (exit 3) says so, and its hint is the run that
// salvages it. Nothing is changed; the other stores are fixed as usual.
// An oversized log (SF502) does not stop a session's repair, and is left
// to a fix without --session. The check ignores the rule selection: a
// session repair that leaves SF501 out still writes into the database.
func (r *fixRun) sessionsOnly(ctx context.Context, stores []store.Store) ([]store.Store, error) {
	var out []store.Store
	health := &scan.Options{Select: []string{scan.SF501}}
	for _, st := range stores {
		rep, err := fix.PlanDatabase(ctx, st, health, r.activityOf(st), false)
		if err != nil {
			r.storeErrs[st.Info().Path] = err
			continue
		}
		if rep == nil || rep.Rule != scan.SF501 {
			out = append(out, st)
			continue
		}
		r.damaged = true
		r.storeErrs[rep.Store.Path] = damagedForSession(rep)
	}
	return out, nil
}

// damagedForSession is the refusal of a --session repair in a damaged
// database, with the runs that repair the database first.
func damagedForSession(rep *fix.DatabaseRepair) error {
	path := rep.Store.Path
	return cli.WithHints(fmt.Errorf("the database %s is damaged (%s %s), so no session of it is repaired with --session: "+
		"the repair would be written into a damaged file; nothing was changed", path, rep.Rule, rep.Finding.Message),
		"see what repairing the database would lose with `"+cli.CommandLine("fix", "--dry-run", path)+"`",
		"repair it with `"+cli.CommandLine("fix", path)+"` (the whole database, no --session), then run this command again")
}
