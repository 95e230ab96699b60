// Package undo is the `sessfix undo` command: put back, byte for byte, what
// one `sessfix fix` run changed, from pkg/backup's journal.
package undo
