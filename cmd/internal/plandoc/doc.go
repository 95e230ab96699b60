// Package plandoc prints what the commands that write through the repair
// pipeline (fix, and the cuts drop, rewind and fork through cmd/internal/cut)
// share: the plan of each session (WritePlans), its unified diff
// (WriteDiffs), the line after a write (FixSummary), and the
// `--format json` document of fix, which the cuts print too
// (NewFixDocument, docs/json-output.md).
//
// Guarantees:
//   - Sessions keep the order of the outcomes given; nothing depends on map
//     order.
//   - Text read from a store goes through report.Clean; colour comes only
//     from the caller's decision (report.NewStyles).
//   - The document has the field set of docs/json-output.md, checked by
//     fixdoc_test.go: every field always present, slices [] rather than
//     null.
package plandoc
