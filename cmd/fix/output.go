package fix

import (
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/plandoc"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/report"
)

// What a run prints at the end: the JSON document, the failures and the
// backup runs to undo.

// finish ends a run that planned: with --format json it prints the
// document of what the run did, then it closes the output. err is the
// run's own result; inputs the error for inputs that could not be opened.
// Stores that could not be read or written make the run fail (exit 3)
// after the others were fixed.
func (r *fixRun) finish(err, inputs error) error {
	var storeErrs []error
	for _, info := range r.stores {
		if e := r.storeErrs[info.Path]; e != nil && info.Shape != "" {
			storeErrs = append(storeErrs, e)
		}
		if e := r.dbErrs[info.Path]; e != nil {
			storeErrs = append(storeErrs, e)
		}
	}
	if r.opts.Factory.Format() == "json" {
		doc := plandoc.NewFixDocument(&plandoc.FixRun{
			Version: r.opts.Factory.Build.Version, Written: r.written,
			Stores: r.stores, Errs: r.storeErrs, Runs: r.runs,
			Sessions: r.sessions(), FailPolicy: r.fails, Databases: r.dbs, DatabaseErrs: r.dbErrs,
		})
		out, oerr := r.flow.Output()
		if oerr == nil {
			if werr := report.WriteJSON(out.W, doc); werr != nil {
				oerr = fmt.Errorf("cannot write the report: %w", werr)
			}
		}
		if oerr != nil {
			err = errors.Join(err, oerr)
		}
	}
	if cerr := r.flow.CloseOutput(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if err == cli.ErrFindings && (inputs != nil || len(storeErrs) > 0) {
		err = nil // the failures say more than "findings remain"
	}
	failed := errors.Join(append([]error{inputs}, storeErrs...)...)
	var fixed []string
	for _, info := range r.stores {
		if run := r.runs[info.Path]; run != "" && r.applied[info.Path] {
			fixed = append(fixed, run)
		}
	}
	if failed != nil && len(fixed) > 0 {
		// Said even with -q, where the runs' status lines are not.
		failed = cli.WithHints(failed, revertHint(fixed))
	}
	return errors.Join(err, failed)
}

// refuse ends a run that stops before writing anything because another
// program holds the store at path (another sessfix's writer lock) or its
// database (OpenCode): exit 4, err. With --format json the run still
// prints its document, like every other run: the refusal is the store's
// error (and a database repair's, outcome refused), nothing written.
func (r *fixRun) refuse(path string, err error) error {
	if r.opts.Factory.Format() != "json" {
		return err
	}
	errs := maps.Clone(r.storeErrs)
	errs[path] = err
	doc := plandoc.NewFixDocument(&plandoc.FixRun{
		Version: r.opts.Factory.Build.Version, Stores: r.stores, Errs: errs, Runs: r.runs,
		FailPolicy: r.fails, Databases: r.dbs, DatabaseErrs: r.dbErrs,
	})
	out, oerr := r.flow.Output()
	if oerr == nil {
		if werr := report.WriteJSON(out.W, doc); werr != nil {
			oerr = fmt.Errorf("cannot write the report: %w", werr)
		}
	}
	if cerr := r.flow.CloseOutput(); oerr == nil {
		oerr = cerr
	}
	return errors.Join(err, oerr)
}

// sessions are the outcomes as they stand after writing: a planned session
// of a store that was written is applied, one whose store failed to be
// written failed.
func (r *fixRun) sessions() []fix.Outcome {
	out := make([]fix.Outcome, len(r.outcomes))
	for i, o := range r.outcomes {
		path := o.Store.Info().Path
		if o.Status == fix.Planned && o.Changes() {
			switch {
			case r.applied[path]:
				o.Status, o.Run = fix.Applied, r.runs[path]
			case r.written && r.storeErrs[path] != nil:
				o.Status, o.Step, o.Err, o.Run = fix.Failed, fix.StepWrite, r.storeErrs[path], r.runs[path]
			}
		}
		out[i] = o
	}
	return out
}

// revertHint is the command that puts back what a run that failed for
// some stores wrote to the others: one store's run by its id, several
// runs (one command's) with `undo --last`, which reverts them all.
func revertHint(runs []string) string {
	if len(runs) == 1 {
		return "the other store was fixed; run `" + cli.CommandLine("undo", runs[0]) + "` to revert it"
	}
	return fmt.Sprintf("the other %d stores were fixed; run `%s` to revert them all (runs %s)",
		len(runs), cli.CommandLine("undo", "--last"), strings.Join(runs, ", "))
}
