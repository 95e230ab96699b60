package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/store"
)

// stopSignals are the signals that stop a command cleanly.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// watchSignals stops the running command at the first signal from sigs:
// ctx is cancelled with a *SignalError and the command ends on its own. A
// second signal (the user pressing Ctrl-C again while it finishes) ends
// the process at once through exit, with that signal's exit code, but
// never leaves a writer lock behind: every lock the process holds is
// released first (store.ReleaseHeld), and stderr says so. It returns when
// done is closed (the command returned).
func watchSignals(sigs <-chan os.Signal, cancel context.CancelCauseFunc, done <-chan struct{}, errOut io.Writer, exit func(int)) {
	stopped := false
	for {
		select {
		case s := <-sigs:
			sig := &SignalError{Signal: s}
			if !stopped {
				stopped = true
				cancel(sig)
				continue
			}
			released := store.ReleaseHeld()
			fmt.Fprintf(errOut, "\nsessfix: %s again, stopped at once\n", signalName(s))
			if n := len(released); n > 0 {
				fmt.Fprintf(errOut, "hint: %s released; if it was writing, `sessfix undo --last` reverts what it wrote\n",
					plural.Count(n, "writer lock", "writer locks"))
			}
			exit(sig.code())
			return
		case <-done:
			return
		}
	}
}
