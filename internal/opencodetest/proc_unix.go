//go:build unix

package opencodetest

import (
	"os/exec"
	"syscall"
	"time"
)

// setProcessGroup puts the command in its own process group, so that a kill
// (on timeout or from Proc.Kill) also reaches the tools OpenCode started.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { killGroup(cmd); return nil }
	cmd.WaitDelay = 10 * time.Second
}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}
