package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/meshplane/meshplane/bench/pkg/resident"
)

// ParseVmRSS extracts the VmRSS line of a /proc/<pid>/status document and
// returns the resident set size in bytes.
func ParseVmRSS(r io.Reader) (int64, error) {
	fields, line, err := statusField(r, "VmRSS")
	if err != nil {
		return 0, fmt.Errorf("%w (kernel thread or zombie process?)", err)
	}
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

// statusField finds the line of field in a /proc/<pid>/status document
// and returns the words after its colon, and the line.
func statusField(r io.Reader, field string) ([]string, string, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			return strings.Fields(rest), sc.Text(), nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, "", err
	}
	return nil, "", fmt.Errorf("no %s line found", field)
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

// ParseStatusKB returns field (for example "RssAnon") of a
// /proc/<pid>/status document in bytes (the kernel writes kB).
func ParseStatusKB(r io.Reader, field string) (int64, error) {
	fields, line, err := statusField(r, field)
	if err != nil {
		return 0, err
	}
	if len(fields) != 2 || fields[1] != "kB" {
		return 0, fmt.Errorf("malformed %s line %q", field, line)
	}
	v, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("malformed %s value in %q", field, line)
	}
	return v * 1024, nil
}

// SampleRSSSplit records the parts of pid's resident set: anonymous
// memory (heap, stacks) and file pages, and of the file pages those of its
// executable's code, read-only data and Go function table (see
// docs/benchmarks.md, issue 13, "idle memory"). Keys are prefix_anon_mib,
// prefix_file_mib, prefix_text_mib, prefix_rodata_mib and
// prefix_pclntab_mib.
func SampleRSSSplit(rep *Report, pid int, prefix, when string) error {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return err
	}
	for _, f := range []struct{ field, key, figure string }{
		{"RssAnon", "anon", "RssAnon (heap, stacks)"},
		{"RssFile", "file", "RssFile (mapped file pages)"},
	} {
		v, err := ParseStatusKB(bytes.NewReader(status), f.field)
		if err != nil {
			return fmt.Errorf("pid %d: %w", pid, err)
		}
		rep.Add(prefix+"_"+f.key+"_mib", "server "+f.figure+" "+when, MiB(v), UnitMiB)
	}
	r, err := resident.Measure(pid, "")
	if err != nil {
		return fmt.Errorf("resident pages of pid %d: %w", pid, err)
	}
	var text, rodata, pclntab uint64
	for _, g := range r.Regions {
		switch {
		case g.Name == ".text":
			text += g.Resident
		case g.Name == ".rodata":
			rodata += g.Resident
		case strings.HasPrefix(g.Name, ".gopclntab"):
			pclntab += g.Resident
		}
	}
	rep.Add(prefix+"_text_mib", "server executable's code resident "+when, MiB(int64(text)), UnitMiB)
	rep.Add(prefix+"_rodata_mib", "server executable's read-only data resident "+when, MiB(int64(rodata)), UnitMiB)
	rep.Add(prefix+"_pclntab_mib", "server executable's Go function table resident "+when, MiB(int64(pclntab)), UnitMiB)
	return nil
}
