package kubecluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Stop stops everything Start started, each process by its PID, in the
// reverse order of dependencies: the kubelet first (nothing restarts pods),
// then every pod sandbox through containerd's CRI (containers killed,
// networks torn down), kube-proxy (and its iptables chains), CoreDNS, the
// provisioner, the control plane, etcd, containerd; then it unmounts what is
// still mounted under Dir, removes the pods' cgroups and the bridge, checks
// that no bridge or iptables rule of the cluster is left, and releases the
// host lock. It returns the errors met on the way; Dir stays.
func (c *Cluster) Stop() error {
	if c == nil {
		return nil
	}
	var errs []error
	byName := map[string]*namedProcess{}
	for _, p := range c.procs {
		byName[p.name] = p
	}
	c.stopProcess(byName["kubelet"])
	if p := byName["containerd"]; p != nil && p.p != nil && p.p.Running() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		errs = append(errs, c.removeSandboxes(ctx))
		cancel()
	}
	if p := byName["kube-proxy"]; p != nil {
		c.stopProcess(p)
		errs = append(errs, c.cleanUpKubeProxy())
	}
	if c.provCancel != nil {
		c.provCancel()
		<-c.provDone
		c.provCancel = nil
	}
	for _, name := range []string{"coredns", "kube-scheduler", "kube-controller-manager", "kube-apiserver"} {
		c.stopProcess(byName[name])
	}
	if c.etcd != nil {
		c.etcd.Close()
		c.etcd = nil
	}
	c.stopProcess(byName["containerd"])
	for _, p := range c.procs {
		c.stopProcess(p)
	}
	c.procs = nil
	errs = append(errs, unmountUnder(c.Dir), removeCgroups(), c.tearDownNetwork())
	if c.unlock != nil {
		// Checked while this cluster still holds the host: after the
		// unlock another cluster may create them.
		errs = append(errs, hostLeftovers())
		c.unlock()
		c.unlock = nil
	}
	return errors.Join(errs...)
}

// hostLeftovers reports the bridge or a kube-proxy, kubelet or CNI
// iptables rule still on the host.
func hostLeftovers() error {
	var errs []error
	if exec.Command("ip", "link", "show", NodeBridge).Run() == nil {
		errs = append(errs, fmt.Errorf("the bridge %s is still there", NodeBridge))
	}
	for _, cmd := range []string{"iptables-save", "ip6tables-save"} {
		out, err := exec.Command(cmd).Output()
		if err != nil {
			continue // no IPv6 tables on this host
		}
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "KUBE-") || strings.Contains(line, "CNI-") {
				errs = append(errs, fmt.Errorf("%s still shows %q", cmd, line))
			}
		}
	}
	return errors.Join(errs...)
}

// unmountUnder unmounts every mount point under dir, deepest first.
func unmountUnder(dir string) error {
	if dir == "" {
		return nil
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	defer f.Close()
	var points []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 5 {
			continue
		}
		p := unescapeMountPath(fields[4])
		if p == dir || strings.HasPrefix(p, dir+"/") {
			points = append(points, p)
		}
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	var errs []error
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, &os.PathError{Op: "unmount", Path: p, Err: err})
		}
	}
	return errors.Join(errs...)
}

// unescapeMountPath undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountPath(p string) string {
	if !strings.Contains(p, `\`) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+3 < len(p) {
			var v byte
			ok := true
			for _, d := range p[i+1 : i+4] {
				if d < '0' || d > '7' {
					ok = false
					break
				}
				v = v*8 + byte(d-'0')
			}
			if ok {
				b.WriteByte(v)
				i += 3
				continue
			}
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// removeCgroups removes cgroupRoot and what the kubelet created under it,
// in every hierarchy, deepest first (a cgroup directory is removed with
// rmdir once empty of processes).
func removeCgroups() error {
	roots, _ := filepath.Glob("/sys/fs/cgroup/*" + cgroupRoot)
	if unified := "/sys/fs/cgroup" + cgroupRoot; exists(unified) {
		roots = append(roots, unified)
	}
	var errs []error
	for _, root := range roots {
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := syscall.Rmdir(dirs[i]); err != nil && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, &os.PathError{Op: "rmdir", Path: dirs[i], Err: err})
			}
		}
	}
	return errors.Join(errs...)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
