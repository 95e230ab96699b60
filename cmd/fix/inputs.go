package fix

import (
	"errors"
	"fmt"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/pkg/report"
	"github.com/sessfix/sessfix/pkg/store"
)

// noInputs ends a fix none of whose inputs could be opened (err says
// why): with --format json the document is still written, naming each
// input with its error, as when only some fail.
func noInputs(f *cli.Factory, fails report.FailPolicy, err error) error {
	if f.Format() != "json" {
		return err
	}
	run := &report.FixRun{Version: f.Build.Version, Errs: map[string]error{}, Runs: map[string]string{}, FailPolicy: fails}
	for _, in := range cli.FailedInputs(err) {
		run.Stores = append(run.Stores, store.Info{Path: in.Path})
		run.Errs[in.Path] = in.Err
	}
	out, oerr := f.OpenOutput()
	if oerr != nil {
		return errors.Join(err, oerr)
	}
	if werr := report.WriteJSON(out.W, report.NewFixDocument(run)); werr != nil {
		out.Close()
		return errors.Join(err, fmt.Errorf("cannot write the report: %w", werr))
	}
	return errors.Join(err, out.Close())
}
