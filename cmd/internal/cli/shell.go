package cli

import (
	"strings"

	"github.com/sessfix/sessfix/pkg/store"
)

// ShellArg is s as one word of a command line a user can paste into a
// shell (store.ShellArg: the hints and the store's own notes quote alike).
func ShellArg(s string) string { return store.ShellArg(s) }

// CommandLine is a sessfix command with its arguments, each made a shell
// word (ShellArg): what a hint tells the user to run.
func CommandLine(args ...string) string {
	words := []string{"sessfix"}
	for _, a := range args {
		words = append(words, ShellArg(a))
	}
	return strings.Join(words, " ")
}
