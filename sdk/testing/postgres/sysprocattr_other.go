//go:build unix && !linux

package postgres

import "syscall"

// sysProcAttr runs a command as cred (nil: as this process) in its own
// process group.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Credential: cred}
}
