// Package diagnose is the `sessfix diagnose --error TEXT` command: classify a
// provider error, map the index or item id it names to the stored message
// and part (an index through the preflight's conversion, an item id by the
// part that stores it), and show what is wrong there and what
// `sessfix fix --error` would do. It never writes.
package diagnose
