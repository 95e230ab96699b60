//go:build !sessfix_faults

package faultpoint

// Hit marks the end of one write step. It does nothing: the build has no
// fault injection (see the package doc).
func Hit(what string) {}

// Enabled reports whether the build injects faults.
const Enabled = false
