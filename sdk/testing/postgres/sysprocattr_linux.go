//go:build linux

package postgres

import "syscall"

// sysProcAttr runs a command as cred (nil: as this process), in its own
// process group, killed when this process dies.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: cred}
}
