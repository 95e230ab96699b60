// Package undo is the `sessfix undo` command: put back, byte for byte, what
// one `sessfix fix` run changed, from pkg/backup's journal. Its
// `--format json` document (document.go) is part of the contract in
// docs/json-output.md.
package undo
