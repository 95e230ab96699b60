package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/sessfix/sessfix/internal/faultpoint"
	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/store"
)

// stopSignals are the signals that stop a command cleanly.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// watchSignals stops the running command at the first signal from sigs:
// ctx is cancelled with a *SignalError and the command ends on its own. A
// second signal (the user pressing Ctrl-C again while it finishes) ends
// the process at once through exit, with that signal's exit code, and
// never lets another sessfix in while a store is half written: between
// two changes, every writer lock is released and no change begins
// (store.ReleaseHeld); in the middle of one, the locks stay until the
// process has ended. stderr says which, and how to undo what was written.
// It returns when done is closed (the command returned).
func watchSignals(sigs <-chan os.Signal, cancel context.CancelCauseFunc, done <-chan struct{}, errOut io.Writer, exit func(int)) {
	stopped := false
	for {
		select {
		case s := <-sigs:
			sig := &SignalError{Signal: s}
			if !stopped {
				stopped = true
				cancel(sig)
				faultpoint.Observed()
				continue
			}
			released, left, resume := store.ReleaseHeld()
			fmt.Fprintf(errOut, "\nsessfix: %s again, stopped at once\n", signalName(s))
			switch {
			case len(left) > 0:
				fmt.Fprintf(errOut, "hint: it stopped in the middle of a change: `sessfix undo --last` puts back what this run wrote; "+
					"its %s (%s) %s until this sessfix has ended, then the next sessfix replaces %s\n",
					plural.Word(len(left), "writer lock", "writer locks"), strings.Join(left, ", "),
					plural.Word(len(left), "stays", "stay"), plural.Word(len(left), "it", "them"))
			case len(released) > 0:
				fmt.Fprintf(errOut, "hint: %s released between two changes; `sessfix undo --last` puts back what this run wrote, if anything\n",
					plural.Count(len(released), "writer lock", "writer locks"))
			}
			exit(sig.code())
			resume() // exit returned: a test's, not the process's
			return
		case <-done:
			return
		}
	}
}
