// Package report renders scan results and rule documentation for people and
// programs. It knows findings and output formats, never storage.
//
// Each output format is one file that registers a Printer under its name
// (text.go: "text", json.go: "json"); New looks formats up by name, so adding
// a format (SARIF, GitHub annotations, JUnit) is one new file.
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
