//go:build unix

package faultpoint

import (
	"os"
	"syscall"
)

// kill sends the process the signal.
func kill(sig syscall.Signal) { _ = syscall.Kill(os.Getpid(), sig) }
