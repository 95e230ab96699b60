// Package holders tells which other programs have a file open or locked.
//
// It reads what the operating system publishes about other processes and
// opens none of their files: /proc/locks for POSIX, OFD and flock locks,
// /proc/<pid>/fd for open files (on Linux; other systems say nothing, and
// every function reports ok = false there). A lock or open file of this
// process is never reported, nor one of another process running the same
// program (by command name): another sessfix is not the program sessfix
// watches for.
//
// It never opens or locks the files it is asked about: closing a file a
// process holds POSIX locks on would drop those locks (SQLite's among
// them), so the answer comes from /proc alone.
package holders

// Lock is a lock another process holds, or waits for, on one of the files
// asked about.
type Lock struct {
	// File is the path asked about that the lock is on.
	File string
	// PID is the holder's process id (-1 for an open-file-description
	// lock, whose owner /proc/locks does not name).
	PID int
	// Write is true for an exclusive (write) lock, false for a shared one.
	Write bool
	// Start and End are the locked byte range, inclusive; End is -1 for
	// "to the end of the file".
	Start, End int64
}

// Process is another process with a file open.
type Process struct {
	PID int
	// Command is its command name (/proc/<pid>/comm), "" when unreadable.
	Command string
	// File is the file it has open.
	File string
}
