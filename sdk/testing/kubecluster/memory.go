package kubecluster

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ResidentMemory is each running component's resident set in bytes, by
// name, plus "pods": the resident memory (rss + mapped files) of the pods'
// cgroup (v1 memory hierarchy). Etcd runs inside the calling process and is
// not counted.
func (c *Cluster) ResidentMemory() map[string]int64 {
	m := map[string]int64{}
	for _, p := range c.procs {
		if p.p == nil || !p.p.Running() {
			continue
		}
		if rss, err := vmRSS(p.p.PID()); err == nil {
			m[p.name] = rss
		}
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory" + cgroupRoot + "/memory.stat"); err == nil {
		var total int64
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) == 2 && (f[0] == "total_rss" || f[0] == "total_mapped_file") {
				n, _ := strconv.ParseInt(f[1], 10, 64)
				total += n
			}
		}
		m["pods"] = total
	}
	return m
}

// PIDs of the running components by name.
func (c *Cluster) PIDs() map[string]int {
	m := map[string]int{}
	for _, p := range c.procs {
		if p.p != nil && p.p.Running() {
			m[p.name] = p.p.PID()
		}
	}
	return m
}

func vmRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}
