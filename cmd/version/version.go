package version

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/pkg/report"
)

// VersionOptions are the parsed inputs of `sessfix version`.
type VersionOptions struct {
	Factory *cli.Factory
}

// NewCmdVersion returns `sessfix version`. runF replaces the work in tests.
func NewCmdVersion(f *cli.Factory, runF func(*VersionOptions) error) *cobra.Command {
	opts := &VersionOptions{Factory: f}
	return &cobra.Command{
		Annotations: cli.Prints("text", "json"),
		Use:         "version",
		Short:       "Print the sessfix version",
		Long: `Print sessfix's version, the commit it was built from and the build date. Release builds carry
them from the linker; other builds take them from Go's build information.`,
		Example: `  sessfix version
  sessfix version --format json`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return RunVersion(opts)
		},
	}
}

// RunVersion does the work of `sessfix version`.
func RunVersion(opts *VersionOptions) error {
	f := opts.Factory
	b := f.Build
	format := f.Format()
	out, err := f.OpenOutput()
	if err != nil {
		return err
	}
	if format == "json" {
		err = report.WriteJSON(out.W, b)
	} else {
		_, err = fmt.Fprintln(out.W, Line(b))
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// Line is the one-line version text: "sessfix 1.2.3 (commit abc1234, built
// 2026-01-02, go1.26.8)", leaving out what is unknown.
func Line(b cli.BuildInfo) string {
	s := "sessfix " + b.Version
	var extra []string
	if b.Commit != "" {
		extra = append(extra, "commit "+b.Commit)
	}
	if b.Date != "" {
		extra = append(extra, "built "+b.Date)
	}
	if b.GoVersion != "" {
		extra = append(extra, b.GoVersion)
	}
	for i, e := range extra {
		if i == 0 {
			s += " ("
		} else {
			s += ", "
		}
		s += e
	}
	if len(extra) > 0 {
		s += ")"
	}
	return s
}
