// Package version is the `sessfix version` command: print the version,
// commit and build date that cmd.Build resolved from the linker flags or Go's
// build information, as text or JSON.
package version
