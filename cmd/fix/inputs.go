package fix

import (
	"errors"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/plandoc"
	"github.com/sessfix/sessfix/pkg/store"
)

// noInputs ends a fix none of whose inputs could be opened (err says
// why): with --format json the document is still written, naming each
// input with its error, as when only some fail.
func noInputs(f *cli.Factory, fails cli.FailPolicy, err error) error {
	if f.Format() != "json" {
		return err
	}
	run := &plandoc.FixRun{Version: f.Build.Version, Errs: map[string]error{}, Runs: map[string]string{}, FailPolicy: fails}
	for _, in := range cli.FailedInputs(err) {
		run.Stores = append(run.Stores, store.Info{Path: in.Path})
		run.Errs[in.Path] = in.Err
	}
	return errors.Join(err, f.WriteDocument(plandoc.NewFixDocument(run)))
}
