// Package sessions is the `sessfix sessions` command: list the sessions of
// the stores, newest first, with their health. It parses flags into
// SessionsOptions and leaves the work to pkg/surgery; list.go prints the
// list (a table on a terminal, tab-separated lines in a pipe) and builds its
// `--format json` document (docs/json-output.md).
package sessions
