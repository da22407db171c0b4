package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// ParseVmRSS extracts the VmRSS line of a /proc/<pid>/status document and
// returns the resident set size in bytes.
func ParseVmRSS(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, "VmRSS:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return 0, fmt.Errorf("malformed VmRSS line %q", line)
		}
		v, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("malformed VmRSS value in %q", line)
		}
		mult := int64(1024) // the kernel always reports kB
		if len(fields) > 1 {
			switch strings.ToLower(fields[1]) {
			case "kb":
				mult = 1024
			case "mb":
				mult = 1024 * 1024
			case "gb":
				mult = 1024 * 1024 * 1024
			case "b":
				mult = 1
			default:
				return 0, fmt.Errorf("unknown VmRSS unit in %q", line)
			}
		}
		return v * mult, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no VmRSS line found (kernel thread or zombie process?)")
}

// ReadRSS returns the resident set size in bytes of process pid, read from
// /proc/<pid>/status.
func ReadRSS(pid int) (int64, error) {
	if pid <= 0 {
		return 0, fmt.Errorf("invalid pid %d", pid)
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	v, err := ParseVmRSS(f)
	if err != nil {
		return 0, fmt.Errorf("pid %d: %w", pid, err)
	}
	return v, nil
}

// SampleRSS waits settle (if positive and ctx allows), reads the RSS of pid
// and, with key set, records it in rep as figure.
func SampleRSS(ctx context.Context, rep *Report, pid int, settle time.Duration, key, figure string) (int64, error) {
	if settle > 0 {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(settle):
		}
	}
	v, err := ReadRSS(pid)
	if err != nil {
		return 0, err
	}
	if key != "" {
		rep.Add(key, figure, MiB(v), UnitMiB)
	}
	return v, nil
}
