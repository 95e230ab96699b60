// Package show is the `sessfix show` command: one session's stored history,
// message by message, or with --sent the request OpenCode would send with
// every provider index mapped to the stored message and part. It parses
// flags into ShowOptions and leaves the work to pkg/surgery; view.go prints
// the two views and document.go builds the `--format json` document, which
// has both (docs/json-output.md).
package show
