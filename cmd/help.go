package cmd

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/sessfix/sessfix/cmd/internal/cli"
)

// helpTopics are the `sessfix help TOPIC` pages that are not commands.
var helpTopics = []string{"exit-codes"}

// newCmdHelp replaces cobra's help command: `sessfix help [COMMAND]` as
// usual, plus the topic `exit-codes` and the hidden `man` generator.
func newCmdHelp(f *cli.Factory) *cobra.Command {
	help := &cobra.Command{
		Use:   "help [command | topic]",
		Short: "Help about any command, or a topic: exit-codes",
		Long: `Help provides help for any command in sessfix, and topics:

  exit-codes   what each exit code of sessfix means`,
		Example: `  sessfix help scan
  sessfix help exit-codes`,
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []string
			for _, sub := range c.Root().Commands() {
				if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
					out = append(out, sub.Name()+"\t"+sub.Short)
				}
			}
			for _, t := range helpTopics {
				if strings.HasPrefix(t, toComplete) {
					out = append(out, t+"\thelp topic")
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			target, rest, err := c.Root().Find(args)
			if err != nil || target == nil || len(rest) > 0 {
				return cli.WithHints(cli.FlagErrorf("unknown help topic %q", strings.Join(args, " ")),
					"run `sessfix help` to list the commands; topics: "+strings.Join(helpTopics, ", "))
			}
			target.InitDefaultHelpFlag()
			target.InitDefaultVersionFlag()
			return target.Help()
		},
	}
	help.AddCommand(newCmdExitCodes(f), newCmdMan(f))
	return help
}

func newCmdExitCodes(f *cli.Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "exit-codes",
		Short:   "What each exit code of sessfix means",
		Example: "  sessfix help exit-codes",
		Args:    cli.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return PrintExitCodes(f.IOStreams.Out)
		},
	}
}

// PrintExitCodes writes the exit code table for `sessfix help exit-codes`.
func PrintExitCodes(w io.Writer) error {
	var b strings.Builder
	b.WriteString("sessfix exit codes (the same for every command; scripts and CI may rely on them):\n\n")
	for _, e := range ExitCodes {
		fmt.Fprintf(&b, "  %-4d %s\n", e.Code, plainText(e.Meaning))
		if e.Examples != "" {
			fmt.Fprintf(&b, "       e.g. %s\n", plainText(e.Examples))
		}
	}
	b.WriteString("\nWhen several apply, the most serious wins: a signal (129, 130, 143), then 4, then 3, then 2, then 1.\n")
	b.WriteString("Errors go to stderr as \"sessfix: what went wrong\" followed by \"hint:\" lines.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// plainText drops markdown code quotes.
func plainText(s string) string { return strings.ReplaceAll(s, "`", "") }

// newCmdMan is `sessfix help man --dir DIR`: man pages generated from the
// command tree, for release archives. Hidden: users read the pages, they do
// not make them.
func newCmdMan(f *cli.Factory) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:    "man --dir DIR",
		Short:  "Write man pages for every command into a directory",
		Hidden: true,
		Args:   cli.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("cannot create the man page directory %s: %w", dir, err)
			}
			root := c.Root()
			root.DisableAutoGenTag = true
			header := &doc.GenManHeader{
				Title:   "SESSFIX",
				Section: "1",
				Source:  "sessfix " + f.Build.Version,
				Manual:  "sessfix manual",
				Date:    manDate(f.Build.Date),
			}
			if err := doc.GenManTree(root, header, dir); err != nil {
				return fmt.Errorf("cannot write man pages to %s: %w", dir, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "write the pages into `DIR` (created if missing)")
	_ = cmd.MarkFlagRequired("dir")
	return cmd
}

// manDate is the build date when known, so release pages are reproducible;
// nil lets cobra use the current date.
func manDate(build string) *time.Time {
	for _, layout := range []string{time.RFC3339, "2006-01-02"} {
		if t, err := time.Parse(layout, build); err == nil {
			return &t
		}
	}
	return nil
}
