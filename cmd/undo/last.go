package undo

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/backup"
)

// undoLast undoes the last operation: every run, not undone yet, of the
// newest sessfix command that wrote (of the stores at or under
// opts.Paths, when given), newest run first. A run that cannot be undone
// does not stop the others; the next undo --last retries it.
func undoLast(ctx context.Context, opts *UndoOptions, bopts backup.Options) error {
	f := opts.Factory
	ios := f.IOStreams
	last, err := backup.LastOperation(bopts, underPaths(opts.Paths))
	op, runs := last.ID, last.Runs
	for _, r := range last.Unread {
		if op != "" { // newer than what --last undoes, and not undone by it
			ios.Statusf("warning: run %s is newer but cannot be read, so it is not undone: %s", r.ID, r.Problem)
		} else { // nothing to undo: each unreadable run, older ones too
			ios.Statusf("warning: run %s cannot be read, so it is not undone: %s", r.ID, r.Problem)
		}
	}
	var done, unread []UndoneRun
	for _, r := range last.Unread {
		unread = append(unread, UndoneRun{Run: r.ID, Err: errors.New(r.Problem), Unreadable: true})
	}
	switch {
	case errors.Is(err, backup.ErrAllUndone):
		err = nil
		msg := "nothing to undo: every backup run is already undone"
		if len(opts.Paths) > 0 {
			msg = "nothing to undo: every backup run of a store at " + strings.Join(opts.Paths, " or ") + " is already undone"
		}
		ios.Statusf("%s", msg)
		done = append(done, UndoneRun{Err: backup.ErrAllUndone})
	case errors.Is(err, backup.ErrNoRuns) && len(opts.Paths) > 0:
		err = cli.WithHints(fmt.Errorf("no backup run changed a store at %s: %w", strings.Join(opts.Paths, " or "), backup.ErrNoRun),
			"list runs and the stores they changed with `sessfix backups`")
		done = append(done, UndoneRun{Err: err})
	case errors.Is(err, backup.ErrNoRuns):
		done = append(done, UndoneRun{Err: err})
		err = cli.WithHints(err, "list runs with `sessfix backups`")
	case err != nil:
		done = append(done, UndoneRun{Err: err})
	}
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	undone := 0
	for _, r := range runs {
		if ctx.Err() != nil {
			// The runs left are not undone: the document says why.
			errs = append(errs, context.Cause(ctx))
			done = append(done, UndoneRun{Err: context.Cause(ctx)})
			break
		}
		res, uerr := undoRun(ctx, f, bopts, r.ID, opts.Force)
		done = append(done, UndoneRun{Run: r.ID, Result: res, Err: uerr})
		if res != nil && opts.Force {
			for _, rf := range res.Refused {
				ios.Statusf("overwrote %s: %s", rf.Target, rf.Reason)
			}
		}
		if uerr != nil {
			var gone *backup.StoreGoneError
			if errors.As(uerr, &gone) {
				// The operation stays the last one until its store is
				// back: say how to reach the commands before it.
				uerr = cli.WithHints(uerr, "until then undo --last takes up this command again; undo the ones before it by store "+
					"(sessfix undo --last PATH) or by run id (sessfix undo RUN; sessfix backups lists them)")
			}
			errs = append(errs, uerr)
			continue
		}
		undone++
		ios.Statusf("%s", res.Message)
	}
	if len(runs) > 1 {
		ios.Statusf("undid %d of the %s of operation %s", undone, plural.Count(len(runs), "run", "runs"), op)
	}
	if f.Format() == "json" {
		if perr := f.WriteDocument(NewUndoOperationDocument(f.Build.Version, op, append(done, unread...), opts.Force)); perr != nil {
			errs = append(errs, perr)
		}
	}
	return errors.Join(errs...)
}

// underPaths accepts the runs of the stores at or under paths; nil (every
// run) when no path is given.
func underPaths(paths []string) func(backup.RunInfo) bool {
	if len(paths) == 0 {
		return nil
	}
	roots := make([]string, len(paths))
	for i, p := range paths {
		roots[i] = canonical(p)
	}
	return func(r backup.RunInfo) bool {
		if r.Store.Path == "" {
			return false
		}
		sp := canonical(r.Store.Path)
		for _, root := range roots {
			if sp == root || strings.HasPrefix(sp, root+string(filepath.Separator)) {
				return true
			}
		}
		return false
	}
}
