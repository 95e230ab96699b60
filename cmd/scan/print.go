package scan

import (
	"context"
	"errors"
	"fmt"

	"github.com/sessfix/sessfix/cmd/internal/cli"

	"github.com/sessfix/sessfix/pkg/report"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

// printReport writes the report to stdout or --output, and on a pipe the
// stores' notes, the summary and the hints to stderr.
func printReport(f *cli.Factory, rep *report.Report) error {
	ios := f.IOStreams
	tty, err := writeReport(f, rep)
	if err != nil {
		return err
	}
	if tty && f.Format() == "text" {
		return nil // the terminal layout already has the summary and hints
	}
	if rep.Result != nil {
		for _, sr := range rep.Result.Stores {
			for _, n := range sr.Info.Notes {
				ios.Statusf("note: %s store %s: %s", sr.Info.Shape, sr.Info.Path, n)
			}
		}
	}
	s := rep.Summarize()
	ios.Statusf("%s", report.FindingsLine(s))
	for _, h := range report.Hints(rep) {
		ios.Statusf("hint: %s", h)
	}
	return nil
}

// writeReport writes the report in the --format format to stdout or
// --output, and says whether that is a terminal.
func writeReport(f *cli.Factory, rep *report.Report) (tty bool, err error) {
	out, err := f.OpenOutput()
	if err != nil {
		return false, err
	}
	p, err := f.Printer(out)
	if err != nil {
		out.Close()
		return false, err
	}
	if err := p.Print(out.W, rep); err != nil {
		out.Close()
		return false, fmt.Errorf("cannot write the report: %w", err)
	}
	return out.TTY, out.Close()
}

// noInputs ends a scan none of whose inputs could be opened (err says
// why): a CI job still gets its document, in every format but text,
// naming each input with its error where the format has a place for it.
// The text output has none: the errors on stderr are all of it.
func noInputs(f *cli.Factory, opts *ScanOptions, policy cli.FailPolicy, err error) error {
	if f.Format() == "text" {
		return err
	}
	res := &scan.Result{}
	for _, in := range cli.FailedInputs(err) {
		res.Stores = append(res.Stores, scan.StoreResult{Info: store.Info{Path: in.Path}, Err: in.Err})
	}
	rep := &report.Report{Result: res, Version: f.Build.Version, FailPolicy: policy,
		FixCommand: cli.CommandLine(append([]string{"fix"}, opts.Paths...)...)}
	if _, perr := writeReport(f, rep); perr != nil {
		return errors.Join(err, perr)
	}
	return err
}

// sessionsNotFound ends a scan asked for a --session id that no store
// holds (err says which): every format but text still gets its document,
// the stores read with no session in them, so that a CI job that parses
// it reads why from its exit code (3) and stderr rather than failing to
// parse. The text output is the error alone.
func sessionsNotFound(f *cli.Factory, rep *report.Report, err error) error {
	if f.Format() == "text" {
		return err
	}
	if _, perr := writeReport(f, rep); perr != nil {
		return errors.Join(err, perr)
	}
	return err
}

// announcing tells the user about a store once scan.Run has listed it, so
// the store is not listed twice just to print its session count.
type announcing struct {
	store.Store
	announce func(info store.Info, sessions int, err error)
}

// checkSessionsFound fails the scan when a --session id is in no store;
// paths are the inputs read, for the hint.
func checkSessionsFound(ids []string, res *scan.Result, paths []string) error {
	found := map[string]bool{}
	for _, sr := range res.Stores {
		for _, s := range sr.Sessions {
			found[s.ID] = true
		}
	}
	return cli.CheckSessionsFound(ids, found, paths)
}

// Unwrap is the store announced, for what scan asks of it beyond
// store.Store (its health).
func (a announcing) Unwrap() store.Store { return a.Store }

func (a announcing) List(ctx context.Context) ([]store.SessionRef, error) {
	refs, err := a.Store.List(ctx)
	a.announce(a.Info(), len(refs), err)
	return refs, err
}
