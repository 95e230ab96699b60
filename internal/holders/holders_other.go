//go:build !linux

package holders

// Locks cannot tell on this system: ok is false.
func Locks(files ...string) (locks []Lock, ok bool) { return nil, false }

// Open cannot tell on this system: ok is false.
func Open(match func(path string) bool) (procs []Process, ok bool) { return nil, false }

// Command cannot tell on this system: it returns "".
func Command(pid int) string { return "" }
