//go:build sessfix_faults

package faultpoint

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
)

// Enabled reports whether the build injects faults.
const Enabled = true

var (
	mu     sync.Mutex
	once   sync.Once
	n      int
	killAt int
	log    *os.File
)

func setup() {
	killAt, _ = strconv.Atoi(os.Getenv("SESSFIX_FAULT_KILL_AT"))
	if p := os.Getenv("SESSFIX_FAULT_LOG"); p != "" {
		log, _ = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	}
}

// Hit marks the end of one write step: it logs the step and, when it is
// step SESSFIX_FAULT_KILL_AT, kills the process at once.
func Hit(what string) {
	once.Do(setup)
	mu.Lock()
	defer mu.Unlock()
	n++
	if log != nil {
		fmt.Fprintf(log, "%d %s\n", n, what)
		log.Sync()
	}
	if n == killAt {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way; nothing more runs
	}
}
