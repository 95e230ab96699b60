// Package sessions is the `sessfix sessions` command: list the sessions of
// the stores, newest first, with their health. It parses flags into
// SessionsOptions and leaves the work to pkg/surgery and pkg/report.
package sessions
