// Package watch is the `sessfix watch` command: open the stores as `scan`
// does, then hand them to pkg/watch, which repairs sessions as they settle,
// and print its events as text lines or JSON Lines. SIGINT, SIGTERM and
// SIGHUP stop it after the repair being written, if any (cmd.Main cancels
// the context; the exit code is the signal's).
package watch
