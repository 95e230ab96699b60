package store

import "fmt"

// ActivityState is what sessfix can see, from outside, of other programs
// using a store.
type ActivityState int

const (
	// ActivityUnknown: this system does not say (no /proc), so another
	// program may be writing the store.
	ActivityUnknown ActivityState = iota
	// ActivityNone: no other program has the store open.
	ActivityNone
	// ActivityOpen: another program (OpenCode, running) has the store open.
	ActivityOpen
	// ActivityWriting: another program holds a write lock on the store
	// right now.
	ActivityWriting
	// ActivityNever: no program but sessfix writes this store (OpenCode
	// does not write export files).
	ActivityNever
)

// Activity is what a store saw of other programs using it (Store.Activity).
type Activity struct {
	State ActivityState
	// PID and Command name one program that has the store open or locked,
	// when known (PID 0 when not).
	PID     int
	Command string
}

// String says what was seen, for messages: "opencode (pid 4242) has the
// store open".
func (a Activity) String() string {
	who := "another program"
	switch {
	case a.Command != "" && a.PID > 0:
		who = fmt.Sprintf("%s (pid %d)", a.Command, a.PID)
	case a.PID > 0:
		who = fmt.Sprintf("pid %d", a.PID)
	}
	switch a.State {
	case ActivityNone:
		return "no other program has the store open"
	case ActivityOpen:
		return who + " has the store open"
	case ActivityWriting:
		return who + " is writing the store"
	case ActivityNever:
		return "OpenCode does not write this store"
	}
	return "whether another program has the store open cannot be seen on this system"
}
