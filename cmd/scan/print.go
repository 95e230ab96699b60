package scan

import (
	"context"
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
	out, err := f.OpenOutput()
	if err != nil {
		return err
	}
	p, err := f.Printer(out)
	if err != nil {
		out.Close()
		return err
	}
	if err := p.Print(out.W, rep); err != nil {
		out.Close()
		return fmt.Errorf("cannot write the report: %w", err)
	}
	if err := out.Close(); err != nil {
		return err
	}
	if out.TTY && f.Format() == "text" {
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

// announcing tells the user about a store once scan.Run has listed it, so
// the store is not listed twice just to print its session count.
type announcing struct {
	store.Store
	announce func(info store.Info, sessions int, err error)
}

// checkSessionsFound fails the scan when a --session id is in no store.
func checkSessionsFound(ids []string, res *scan.Result) error {
	found := map[string]bool{}
	for _, sr := range res.Stores {
		for _, s := range sr.Sessions {
			found[s.ID] = true
		}
	}
	return cli.CheckSessionsFound(ids, found)
}

func (a announcing) List(ctx context.Context) ([]store.SessionRef, error) {
	refs, err := a.Store.List(ctx)
	a.announce(a.Info(), len(refs), err)
	return refs, err
}
