package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// formatsKey is the cobra annotation holding the --format values a command
// prints, comma-separated.
const formatsKey = "sessfix:formats"

// ciFormats are the formats only `sessfix scan` prints: CI reports of
// findings.
var ciFormats = []string{"github", "junit", "sarif"}

// Prints declares the --format values a command prints, the first being
// the default, as the command's Annotations: CheckUsage refuses any other
// before the command runs. A command that declares none prints text only.
func Prints(formats ...string) map[string]string {
	return map[string]string{formatsKey: strings.Join(formats, ",")}
}

// Formats returns the --format values cmd prints (see Prints).
func Formats(cmd *cobra.Command) []string {
	if v := cmd.Annotations[formatsKey]; v != "" {
		return strings.Split(v, ",")
	}
	return []string{"text"}
}

// CheckUsage is what the root command checks before any command runs,
// where cobra would otherwise fail with an error that is not a usage error
// (exit code 3) or not check at all: the flags cmd requires, its flag
// groups, and the --format value, which must be one cmd prints.
func CheckUsage(cmd *cobra.Command, format string) error {
	if missing := missingFlags(cmd); len(missing) > 0 {
		err := FlagErrorf("%s needs %s", name(cmd), strings.Join(missing, " and "))
		if ex := firstExample(cmd); ex != "" {
			return WithHints(err, "for example: "+ex)
		}
		return err
	}
	if err := cmd.ValidateFlagGroups(); err != nil {
		return &FlagError{Err: err}
	}
	accepted := Formats(cmd)
	if !cmd.HasParent() || slices.Contains(accepted, strings.ToLower(format)) {
		return nil // sessfix alone prints its help, whatever the format
	}
	err := FlagErrorf("%s prints %s, not %q", name(cmd), orList(accepted), format)
	if slices.Contains(ciFormats, strings.ToLower(format)) && !slices.Contains(accepted, "sarif") {
		return WithHints(err, "the CI formats ("+strings.Join(ciFormats, ", ")+") are for `sessfix scan`; docs/ci.md")
	}
	return err
}

// name is the command's path without the program's name ("backups
// prune"), for messages that follow "sessfix: ".
func name(cmd *cobra.Command) string {
	if !cmd.HasParent() {
		return cmd.Name()
	}
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

// missingFlags lists, as --name, the flags cmd requires that are not set.
func missingFlags(cmd *cobra.Command) []string {
	var out []string
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		if req := fl.Annotations[cobra.BashCompOneRequiredFlag]; len(req) > 0 && req[0] == "true" && !fl.Changed {
			out = append(out, "--"+fl.Name)
		}
	})
	return out
}

// firstExample is the first line of cmd's examples that is not a comment.
func firstExample(cmd *cobra.Command) string {
	for _, line := range strings.Split(cmd.Example, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			return line
		}
	}
	return ""
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// UsageErrors makes every usage error of the command tree under root a
// FlagError (exit code 2), including those cobra reports itself: a
// positional argument its Args refuse, and an unknown subcommand of a
// command that only groups others (`sessfix completion tcsh`), which cobra
// would answer with its help and exit 0. Call it once the tree is built.
func UsageErrors(root *cobra.Command) {
	for _, c := range root.Commands() {
		UsageErrors(c)
	}
	if args := root.Args; args != nil {
		root.Args = func(cmd *cobra.Command, a []string) error {
			err := args(cmd, a)
			var fe *FlagError
			if err != nil && !errors.As(err, &fe) {
				return &FlagError{Err: err}
			}
			return err
		}
	}
	if root.HasParent() && !root.Runnable() && root.HasSubCommands() {
		root.Args = func(cmd *cobra.Command, a []string) error {
			if len(a) == 0 {
				return nil
			}
			var names []string
			for _, sub := range cmd.Commands() {
				if sub.IsAvailableCommand() {
					names = append(names, sub.Name())
				}
			}
			return WithHints(FlagErrorf("unknown command %q for %s", a[0], cmd.CommandPath()),
				fmt.Sprintf("%s takes one of: %s", name(cmd), strings.Join(names, ", ")))
		}
		root.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	}
}
