package faultpoint

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
)

var (
	enabled atomic.Bool
	mu      sync.Mutex
	once    sync.Once
	n       int
	at      int
	sig     = syscall.SIGKILL
	log     *os.File
)

// Enable turns fault injection on for this process: from now on Hit reads
// the environment (see the package doc). A build with the tag
// sessfix_faults enables it at start; a test that runs its own binary as
// sessfix calls it there. sessfix itself never does.
func Enable() { enabled.Store(true) }

func setup() {
	at, _ = strconv.Atoi(os.Getenv("SESSFIX_FAULT_AT"))
	switch os.Getenv("SESSFIX_FAULT_SIGNAL") {
	case "INT":
		sig = syscall.SIGINT
	case "TERM":
		sig = syscall.SIGTERM
	case "HUP":
		sig = syscall.SIGHUP
	}
	if p := os.Getenv("SESSFIX_FAULT_LOG"); p != "" {
		log, _ = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	}
}

// Hit marks the end of one step. Unless fault injection is enabled it
// does nothing; then it logs the step and, at step SESSFIX_FAULT_AT, sends
// the process SESSFIX_FAULT_SIGNAL (SIGKILL when unset: nothing more runs).
func Hit(what string) {
	if !enabled.Load() {
		return
	}
	once.Do(setup)
	mu.Lock()
	defer mu.Unlock()
	n++
	if log != nil {
		fmt.Fprintf(log, "%d %s\n", n, what)
		log.Sync()
	}
	if n != at {
		return
	}
	kill(sig)
	if sig == syscall.SIGKILL {
		select {} // the signal is on its way; nothing more runs
	}
	// The process handles the signal on another goroutine: wait until it
	// has (Observed), so the step after this one runs with the signal
	// already seen, however loaded the machine is.
	<-observed
}

// observed hears that the process has taken a signal Hit sent.
var observed = make(chan struct{}, 1)

// Observed tells a waiting Hit that the process has taken the signal it
// sent (its signal handler calls it once the command is cancelled). It
// does nothing unless fault injection is enabled, and never blocks.
func Observed() {
	if !enabled.Load() {
		return
	}
	select {
	case observed <- struct{}{}:
	default:
	}
}
