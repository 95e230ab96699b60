// Package explain is the `sessfix explain CODE` command: print one rule's
// documentation.
package explain
