// Package report renders scan results and rule documentation for people and
// programs. It knows findings and output formats, never storage.
//
// Each output format is one file that registers a Printer under its name
// (text.go: "text", json.go: "json", sarif.go: "sarif", github.go:
// "github", junit.go: "junit"); New looks formats up by name, so adding a
// format is one new file. The CI formats (sarif, github, junit) make paths
// relative to Options.BaseDir.
//
// Suppressed findings (scan.Finding.Suppression, set from a config file)
// never fail a run: text and github output leave them out, JSON and SARIF
// show them marked, JUnit lists them in system-out. Which findings fail
// the run is the command's decision (--fail-on, cli.FailPolicy), handed
// in as Report.FailPolicy: printers mark and count what it fails (JUnit's
// failures, the JSON summary's failing and fail_on, the explain hint).
//
// Besides the printers, the package holds what every command's output
// shares: Clean for text read from a store, the Styles, and the JSON
// layout (WriteJSON, SchemaVersion, JSONTime). The documents of fix, undo,
// sessions and show are built by their commands (cmd/internal/plandoc,
// cmd/undo, cmd/sessions, cmd/show).
//
// Guarantees:
//   - Output is a pure function of the Report and the Options: findings keep
//     the order scan.Run gives them, groups and counts are sorted, no map
//     order leaks.
//   - Piped text is one stable line per finding and nothing else.
//   - JSON is one document with the field set documented in
//     docs/json-output.md; slices are [] rather than null.
//   - Colour comes only from Options.Color, decided by the caller; the styles
//     in styles.go never probe the terminal themselves.
package report
