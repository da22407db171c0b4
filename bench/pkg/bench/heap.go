package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// HeapPath is the Go heap profile of a kube-style API server in its text
// form, taken right after a forced garbage collection (gc=1): its
// "# HeapAlloc = N" line is then the live heap. Meshplane and
// kube-apiserver serve it to system:masters (kube's --profiling).
const HeapPath = "/debug/pprof/heap?gc=1&debug=1"

// ParseHeapAlloc extracts HeapAlloc (bytes) from the runtime.MemStats
// section of a text heap profile.
func ParseHeapAlloc(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "# HeapAlloc = ")
		if !ok {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("malformed HeapAlloc line %q", sc.Text())
		}
		return v, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no HeapAlloc line in the heap profile")
}

// ReadLiveHeap forces a garbage collection in the server at base (its
// URL without /clusters/...) and returns its live Go heap in bytes.
func ReadLiveHeap(ctx context.Context, hc *http.Client, base string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+HeapPath, nil)
	if err != nil {
		return 0, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %s", HeapPath, resp.Status)
	}
	return ParseHeapAlloc(resp.Body)
}
