//go:build linux

package framework

import "syscall"

// sysProcAttr makes the server die with the test process (so an aborted or
// timed-out test run leaves no server behind) and puts it in its own process
// group so that terminal signals aimed at `go test` are not delivered twice.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
