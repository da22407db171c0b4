package kubecluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// hostLockFile serializes clusters on a host: kube-proxy's and the kubelet's
// iptables chains, the bridge and the node address are host-wide.
const hostLockFile = "/run/meshplane-kubecluster.lock"

// checkPrerequisites reports the first thing this machine lacks: root,
// cgroups, or a command from a Debian package.
func checkPrerequisites() error {
	if os.Geteuid() != 0 {
		return &PrerequisiteError{Missing: "root (the kubelet, containerd and kube-proxy need it)"}
	}
	if _, err := os.Stat("/sys/fs/cgroup/memory"); err != nil {
		if _, err2 := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err2 != nil {
			return &PrerequisiteError{Missing: "a mounted cgroup hierarchy (/sys/fs/cgroup/memory or cgroup v2)"}
		}
	}
	commands := []struct{ cmd, pkg string }{
		{"containerd", "containerd"}, {"containerd-shim-runc-v2", "containerd"}, {"ctr", "containerd"},
		{"runc", "runc"}, {"iptables", "iptables"}, {"iptables-restore", "iptables"},
		{"conntrack", "conntrack"}, {"ip", "iproute2"},
	}
	for _, c := range commands {
		if _, err := exec.LookPath(c.cmd); err != nil {
			return &PrerequisiteError{Missing: fmt.Sprintf("%s (Debian package %s; scripts/install-test-deps.sh installs it)", c.cmd, c.pkg)}
		}
	}
	for _, p := range []string{"bridge", "host-local", "loopback", "portmap"} {
		if _, err := os.Stat(filepath.Join(cniBinDir, p)); err != nil {
			return &PrerequisiteError{Missing: fmt.Sprintf("the CNI plugin %s/%s (Debian package containernetworking-plugins; scripts/install-test-deps.sh installs it)", cniBinDir, p)}
		}
	}
	return nil
}

// EnsurePrerequisites checks what Start needs from the machine and, when a
// Debian package is missing, runs scripts/install-test-deps.sh once and
// checks again. The error left, if any, is a *PrerequisiteError saying what
// could not be had (tests skip on it).
func EnsurePrerequisites(ctx context.Context) error {
	err := checkPrerequisites()
	if err == nil || os.Geteuid() != 0 {
		return err
	}
	root, rerr := repoRoot()
	if rerr != nil {
		return err
	}
	out, ierr := exec.CommandContext(ctx, filepath.Join(root, "scripts", "install-test-deps.sh")).CombinedOutput()
	if err := checkPrerequisites(); err != nil {
		var pe *PrerequisiteError
		if errors.As(err, &pe) {
			pe.Missing += fmt.Sprintf(" (scripts/install-test-deps.sh: %v %s)", ierr, strings.TrimSpace(string(out)))
		}
		return err
	}
	return nil
}

// lockHost takes the host lock, waiting while another cluster holds it.
func (c *Cluster) lockHost(ctx context.Context) error {
	f, err := os.OpenFile(hostLockFile, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	logged := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return err
		}
		if !logged {
			c.opts.Logf("kubecluster: waiting for another cluster on this host to stop (%s)", hostLockFile)
			logged = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	c.unlock = func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
	return nil
}

// writeSysctl sets a kernel parameter (host-wide).
func writeSysctl(name, value string) error {
	return os.WriteFile(filepath.Join("/proc/sys", name), []byte(value), 0o644)
}
