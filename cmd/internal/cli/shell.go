package cli

import "strings"

// ShellArg is s as one word of a command line a user can paste into a
// shell: as it is when it holds only characters no shell treats specially,
// else in single quotes.
func ShellArg(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-=:,@+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// CommandLine is a sessfix command with its arguments, each made a shell
// word (ShellArg): what a hint tells the user to run.
func CommandLine(args ...string) string {
	words := []string{"sessfix"}
	for _, a := range args {
		words = append(words, ShellArg(a))
	}
	return strings.Join(words, " ")
}
