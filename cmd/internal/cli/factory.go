package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	"github.com/sessfix/sessfix/pkg/config"
	"github.com/sessfix/sessfix/pkg/ocenv"
	"github.com/sessfix/sessfix/pkg/report"
	"github.com/sessfix/sessfix/pkg/store/shapes"
)

// BuildInfo is what `sessfix version` prints.
type BuildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date"`
	GoVersion string `json:"go"`
}

// Factory gives commands what they depend on. Tests build one with
// buffered streams and fake stores.
type Factory struct {
	IOStreams *iostreams.IOStreams
	Build     BuildInfo
	// Env is the environment store discovery reads.
	Env func() shapes.Env
	// Discover finds the user's stores when no path is given.
	Discover func(shapes.Env) (*shapes.Discovery, error)
	// Open opens stores at explicit paths.
	Open func(paths []string) (*shapes.Discovery, error)
	// Now is the clock; commands read it through Clock.
	Now func() time.Time
	// Prompter asks the user before a command writes; nil asks on the
	// terminal (Prompt).
	Prompter Prompter
	// Globals holds the persistent flags, filled in when flags are parsed.
	Globals *Globals
	// Getwd returns the working directory (config discovery, relative
	// paths in CI reports); nil means os.Getwd.
	Getwd func() (string, error)
	// OpenCodeEnv is the environment OpenCode's config files and models
	// catalogue are found from (SF213); nil reads none.
	OpenCodeEnv func() ocenv.Env

	config    *config.Config
	configErr error
}

// New returns the factory of a real run.
func New(build BuildInfo) *Factory {
	return &Factory{
		IOStreams:   iostreams.System(),
		Build:       build,
		Env:         shapes.EnvFromOS,
		Discover:    shapes.Discover,
		Open:        shapes.Open,
		Now:         time.Now,
		OpenCodeEnv: ocenv.FromProcess,
		Globals:     &Globals{Color: iostreams.ColorAuto, Format: "text"},
	}
}

// Globals are the flags every command accepts.
type Globals struct {
	// Color is --color: auto, always or never.
	Color string
	// Format is --format: an output format from pkg/report.
	Format string
	// Output is --output: write the report to this file instead of stdout.
	Output string
	// Quiet is -q: no status lines, notes, hints or progress on stderr.
	Quiet bool
	// Config is --config: the config file to read instead of looking for
	// .sessfix.json or .sessfix.yaml.
	Config string
}

// Output is where a command writes its result.
type Output struct {
	W io.Writer
	// TTY is true when W is a terminal (and not a file named by --output):
	// it selects the terminal layout of text output.
	TTY bool
	// Color is the colour decision for W.
	Color bool
	close func() error
}

// Close closes the --output file, if any.
func (o *Output) Close() error {
	if o.close == nil {
		return nil
	}
	return o.close()
}

// OpenOutput returns stdout, or the --output file created (or truncated).
// Output to a file is never a terminal and never coloured.
func (f *Factory) OpenOutput() (*Output, error) {
	ios := f.IOStreams
	if f.Globals == nil || f.Globals.Output == "" || f.Globals.Output == "-" {
		return &Output{W: ios.Out, TTY: ios.IsStdoutTTY(), Color: ios.ColorEnabled()}, nil
	}
	path := f.Globals.Output
	file, err := os.Create(path)
	if err != nil {
		return nil, WithHints(fmt.Errorf("cannot write the report to %s: %w", path, pathCause(err)),
			"check that the directory exists and is writable, or drop --output to print to stdout")
	}
	return &Output{W: file, close: func() error {
		if err := file.Close(); err != nil {
			return fmt.Errorf("cannot write the report to %s: %w", path, pathCause(err))
		}
		return nil
	}}, nil
}

// WriteDocument writes a command's --format json document (report.WriteJSON)
// to stdout or the --output file.
func (f *Factory) WriteDocument(doc any) error {
	out, err := f.OpenOutput()
	if err != nil {
		return err
	}
	if err := report.WriteJSON(out.W, doc); err != nil {
		out.Close()
		return fmt.Errorf("cannot write the report: %w", err)
	}
	return out.Close()
}

// pathCause is the system's reason in a file operation's error, without
// the operation and path it repeats ("permission denied" of "open PATH:
// permission denied"), for messages that name the path themselves.
func pathCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Printer returns the printer of the --format format for out.
func (f *Factory) Printer(out *Output) (report.Printer, error) {
	format := "text"
	if f.Globals != nil && f.Globals.Format != "" {
		format = f.Globals.Format
	}
	base, _ := f.Workdir() // no working directory: paths stay as they are
	p, err := report.New(format, report.Options{TTY: out.TTY, Color: out.Color, BaseDir: base})
	if err != nil {
		return nil, FlagErrorf("%v", err)
	}
	return p, nil
}

// Format returns the --format value, "text" by default.
func (f *Factory) Format() string {
	if f.Globals == nil || f.Globals.Format == "" {
		return "text"
	}
	return f.Globals.Format
}

// OpenCode reads what OpenCode reads outside its data dir, for the scan
// options; nil when the factory has no OpenCodeEnv.
func (f *Factory) OpenCode() *ocenv.Resolver {
	if f.OpenCodeEnv == nil {
		return nil
	}
	return ocenv.NewResolver(f.OpenCodeEnv())
}
