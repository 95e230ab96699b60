package cli

import (
	"github.com/spf13/cobra"
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
