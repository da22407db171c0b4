//go:build linux

package framework

import "syscall"

// sysProcAttr puts the child in its own process group (so terminal signals
// aimed at the parent are not delivered twice, and Stop can reach helpers it
// spawned) and kills it when the parent dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup SIGKILLs the process group created by Setpgid.
func (p *Process) killGroup() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	_ = p.cmd.Process.Kill()
}
