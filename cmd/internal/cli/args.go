package cli

import (
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// ExactArgs requires n arguments; otherwise it is a usage error saying what
// is expected.
func ExactArgs(n int, want string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return FlagErrorf("%s", want)
		}
		return nil
	}
}

// NoArgs rejects arguments as a usage error.
func NoArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return FlagErrorf("%s takes no arguments, got %q", name(cmd), args[0])
	}
	return nil
}

// StorePathArgs refuses an argument after the session id that is a path: the
// surgery commands name their stores with --store, and a user who types the
// store where scan takes it gets the command to run, with the path moved to
// --store and every flag they gave kept.
func StorePathArgs(cmd *cobra.Command, args []string) error {
	if len(args) < 2 {
		return nil
	}
	var ids, paths []string
	for _, a := range args[1:] {
		if looksLikePath(a) {
			paths = append(paths, a)
		} else {
			ids = append(ids, a)
		}
	}
	if len(paths) == 0 {
		return nil
	}
	verb := name(cmd)
	words := append([]string{verb, args[0]}, ids...)
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if f.Name == StoreFlag {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				words = append(words, "--"+f.Name+"="+v)
			}
			return
		}
		if f.Value.Type() == "bool" && f.Value.String() == "true" {
			words = append(words, "--"+f.Name)
			return
		}
		words = append(words, "--"+f.Name+"="+f.Value.String())
	})
	for _, p := range append(storePaths(cmd, nil), paths...) {
		words = append(words, "--"+StoreFlag, p)
	}
	return WithHints(FlagErrorf("%s is a path: %s takes the store with --%s", paths[0], verb, StoreFlag),
		"run: "+CommandLine(words...))
}

// looksLikePath is true for an argument no session, message or part id can
// be: one with a path separator or a dot, or one that names an existing file.
func looksLikePath(arg string) bool {
	if strings.ContainsAny(arg, `/\.~`) {
		return true
	}
	_, err := os.Stat(arg)
	return err == nil
}
