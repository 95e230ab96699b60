package cmd

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"

	backupscmd "github.com/sessfix/sessfix/cmd/backups"
	diagnosecmd "github.com/sessfix/sessfix/cmd/diagnose"
	dropcmd "github.com/sessfix/sessfix/cmd/drop"
	explaincmd "github.com/sessfix/sessfix/cmd/explain"
	fixcmd "github.com/sessfix/sessfix/cmd/fix"
	forkcmd "github.com/sessfix/sessfix/cmd/fork"
	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	rewindcmd "github.com/sessfix/sessfix/cmd/rewind"
	rulescmd "github.com/sessfix/sessfix/cmd/rules"
	scancmd "github.com/sessfix/sessfix/cmd/scan"
	sessionscmd "github.com/sessfix/sessfix/cmd/sessions"
	showcmd "github.com/sessfix/sessfix/cmd/show"
	undocmd "github.com/sessfix/sessfix/cmd/undo"
	versioncmd "github.com/sessfix/sessfix/cmd/version"
	watchcmd "github.com/sessfix/sessfix/cmd/watch"
	"github.com/sessfix/sessfix/pkg/store"
)

// NewCmdRoot builds the command tree on f.
func NewCmdRoot(f *cli.Factory) *cobra.Command {
	if f.Globals == nil {
		f.Globals = &cli.Globals{}
	}
	g := f.Globals
	root := &cobra.Command{
		Use:   "sessfix <command> [flags]",
		Short: "Find and repair broken OpenCode sessions",
		Long: `sessfix finds and repairs OpenCode sessions that a provider refuses to continue: empty messages,
thinking blocks in the wrong place, unfinished tools, corrupted records. It reads every storage layout
OpenCode has used (SQLite, JSON storage/, project trees, sessions dirs, export files).

Start with ` + "`sessfix scan`" + `. Settings can live in .sessfix.yaml or .sessfix.json at the repository root
(or --config FILE). Exit codes: ` + "`sessfix help exit-codes`" + `. Guides: https://github.com/sessfix/sessfix/tree/main/docs`,
		Example: `  sessfix scan
  sessfix fix --dry-run --diff
  sessfix rules
  sessfix explain SF103
  sessfix help exit-codes`,
		Version:                    f.Build.Version,
		SilenceErrors:              true,
		SilenceUsage:               true,
		SuggestionsMinimumDistance: 2,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := "unknown command " + quote(args[0]) + " for sessfix"
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				return cli.WithHints(cli.FlagErrorf("%s", msg), "did you mean "+strings.Join(s, ", ")+"?")
			}
			return cli.WithHints(cli.FlagErrorf("%s", msg), "run `sessfix help` to list the commands")
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if err := f.IOStreams.SetColorMode(g.Color); err != nil {
				return &cli.FlagError{Err: err}
			}
			f.IOStreams.SetQuiet(g.Quiet)
			return cli.CheckUsage(cmd, g.Format)
		},
	}
	root.SetVersionTemplate("{{with .Name}}{{printf \"%s \" .}}{{end}}{{printf \"%s\" .Version}}\n")
	root.SetIn(f.IOStreams.In)
	root.SetOut(f.IOStreams.Out)
	root.SetErr(f.IOStreams.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &cli.FlagError{Err: err} })

	pf := root.PersistentFlags()
	pf.StringVar(&g.Color, "color", iostreams.ColorAuto, "colour the output: `WHEN` is auto, always or never")
	pf.StringVar(&g.Format, "format", "text", "output `FORMAT`: text or json; scan also prints github, junit and sarif")
	pf.StringVarP(&g.Output, "output", "o", "", "write the report to `FILE` instead of stdout")
	pf.BoolVarP(&g.Quiet, "quiet", "q", false, "print no status lines, notes, hints or progress on stderr")
	pf.StringVar(&g.Config, "config", "", "read settings from `FILE` instead of .sessfix.json or .sessfix.yaml found from the working directory")
	_ = root.RegisterFlagCompletionFunc("color", cobra.FixedCompletions(iostreams.ColorModes, cobra.ShellCompDirectiveNoFileComp))
	_ = root.RegisterFlagCompletionFunc("format", func(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
		return cli.Formats(cmd), cobra.ShellCompDirectiveNoFileComp
	})
	_ = root.RegisterFlagCompletionFunc("config", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"json", "yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
	})
	root.SetHelpCommand(newCmdHelp(f))

	root.AddCommand(
		scancmd.NewCmdScan(f, nil),
		sessionscmd.NewCmdSessions(f, nil),
		showcmd.NewCmdShow(f, nil),
		dropcmd.NewCmdDrop(f, nil),
		rewindcmd.NewCmdRewind(f, nil),
		forkcmd.NewCmdFork(f, nil),
		fixcmd.NewCmdFix(f, nil),
		undocmd.NewCmdUndo(f, nil),
		backupscmd.NewCmdBackups(f, nil),
		rulescmd.NewCmdRules(f, nil),
		explaincmd.NewCmdExplain(f, nil),
		diagnosecmd.NewCmdDiagnose(f, nil),
		versioncmd.NewCmdVersion(f, nil),
		watchcmd.NewCmdWatch(f, nil),
	)
	// The help and completion commands now rather than when the tree
	// runs, so that UsageErrors covers them too.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	cli.UsageErrors(root)
	return root
}

func quote(s string) string { return "\"" + s + "\"" }

// Main runs sessfix with the process's arguments and streams and returns
// the exit code. SIGINT, SIGTERM and SIGHUP stop the running command the
// same way: its context is cancelled with a *SignalError, it finishes or
// rolls back what it is writing and releases its locks, and sessfix exits
// with 128 + the signal's number (130, 143, 129). A second signal ends the
// process at once, its writer locks released first (watchSignals).
func Main() int {
	f := cli.New(Build())
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, stopSignals...)
	defer signal.Stop(sigs)
	done := make(chan struct{})
	defer close(done)
	go watchSignals(sigs, cancel, done, f.IOStreams.ErrOut, os.Exit)
	return Run(ctx, f, os.Args[1:])
}

// Run executes the command line args on f and returns the exit code,
// printing any error on f's stderr. When ctx ended before the command
// returned, the run ends as interrupted whatever the command returned (a
// command that stops cleanly returns nil): with the signal's exit code when
// context.Cause is a *SignalError, else 130. Writer locks and backups
// record f's build version.
func Run(ctx context.Context, f *cli.Factory, args []string) int {
	store.Version = f.Build.Version
	root := NewCmdRoot(f)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	err = cli.RerunHint(err, args)
	err = usageHint(cmd, err)
	if ctx.Err() != nil {
		err = stopped(err, context.Cause(ctx))
	}
	PrintError(f.IOStreams.ErrOut, err)
	return ExitCode(err)
}

// usageHint points a usage error that has no advice of its own at the help
// of the command it is about.
func usageHint(cmd *cobra.Command, err error) error {
	var fe *cli.FlagError
	if cmd == nil || !errors.As(err, &fe) || len(cli.Hints(err)) > 0 {
		return err
	}
	return cli.WithHints(err, "run `"+cmd.CommandPath()+" --help` for its flags and examples")
}

// stopped is the error of a command whose context ended: the cause, or the
// command's own failure after it.
func stopped(err, cause error) error {
	var sig *SignalError
	errors.As(cause, &sig)
	switch {
	case err == nil || onlyFindings(err):
		if sig != nil {
			return sig
		}
		return context.Canceled
	case errors.Is(err, context.Canceled) && !errors.As(err, new(*interruptedError)):
		if sig != nil {
			return sig
		}
		return err
	}
	return &interruptedError{err: err, sig: sig}
}
