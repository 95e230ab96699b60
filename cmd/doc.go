// Package cmd is sessfix's command line: the cobra command tree, the process
// entry point Main, build information, and the one mapping from errors to exit
// codes (exitcode.go). Each verb lives in its own package (cmd/scan,
// cmd/rules, cmd/explain, cmd/version) with an XOptions struct and a
// NewCmdX(f, runF) constructor; commands are thin and leave the work to pkg/.
package cmd
