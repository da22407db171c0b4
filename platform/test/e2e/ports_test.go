package e2e

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// listeningPorts returns the TCP ports on which pid or any of its
// descendants listen, read from /proc.
func listeningPorts(pid int) ([]int, error) {
	inodes := map[string]bool{}
	for _, p := range descendants(pid) {
		links, _ := filepath.Glob("/proc/" + strconv.Itoa(p) + "/fd/*")
		for _, l := range links {
			target, err := os.Readlink(l)
			if err == nil && strings.HasPrefix(target, "socket:[") {
				inodes[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")] = true
			}
		}
	}
	var ports []int
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// local_address is fields[1] (ip:port in hex), st is fields[3], inode fields[9].
			if len(fields) < 10 || fields[3] != "0A" || !inodes[fields[9]] {
				continue
			}
			_, hexPort, _ := strings.Cut(fields[1], ":")
			port, err := strconv.ParseInt(hexPort, 16, 32)
			if err == nil {
				ports = append(ports, int(port))
			}
		}
		f.Close()
	}
	return ports, nil
}

// descendants returns pid and every process below it.
func descendants(pid int) []int {
	children := map[int][]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		data, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
		text := string(data)
		close := strings.LastIndexByte(text, ')')
		if close < 0 {
			continue
		}
		fields := strings.Fields(text[close+1:])
		if len(fields) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		p, _ := strconv.Atoi(filepath.Base(filepath.Dir(s)))
		children[ppid] = append(children[ppid], p)
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}
