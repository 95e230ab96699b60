// Package diagnose is the `sessfix diagnose --error TEXT` command: classify a
// provider error, map its messages.N index to the stored message and part
// through the preflight's conversion, and show what is wrong there and what
// `sessfix fix --error` would do. It never writes.
package diagnose
