// Package hardening measures the core under a tenant's abuse (issue 28):
// 200 watch clients relisting and rewatching a namespace that holds the
// largest object a tenant can store, with the core's peak RSS and the
// writes that still get through; and the latency of a request only the
// authorization webhook could allow while the webhook is SIGSTOPped.
//
// Run with `make bench` (scripts/bench.sh, HARDEN_BENCH=0 skips) or
// HARDEN_BENCH_RUN=1 go test -run TestHardeningBench -v ./bench/test/hardening/
// (HARDEN_BENCH_SECONDS, HARDEN_BENCH_WATCHERS and HARDEN_BENCH_DENIED size
// it; HARDEN_BENCH_OUT names a file for the Markdown table; MESHPLANE_BIN
// picks the core).
package hardening

import (
	"compress/gzip"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/meshplane/meshplane/bench/pkg/bench"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// helperEnv makes the test binary a TCP listener that is then stopped
// (SIGSTOP): a hung webhook whose kernel still accepts connections.
const helperEnv = "HARDEN_BENCH_LISTEN"

func TestMain(m *testing.M) {
	if addr := os.Getenv(helperEnv); addr != "" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("listening")
		defer l.Close()
		select {}
	}
	code := m.Run()
	framework.CleanupBinaries()
	os.Exit(code)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func TestHardeningBench(t *testing.T) {
	if os.Getenv("HARDEN_BENCH_RUN") == "" {
		t.Skip("set HARDEN_BENCH_RUN=1 (make bench does)")
	}
	var rows []string
	rows = append(rows, watchStorm(t)...)
	rows = append(rows, hungWebhook(t)...)
	out := "| hardening (issue 28) | |\n|---|---|\n" + strings.Join(rows, "\n") + "\n"
	t.Log("\n" + out)
	if f := os.Getenv("HARDEN_BENCH_OUT"); f != "" {
		if err := os.WriteFile(f, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// client is an HTTP/1.1 client of its own (its own connection), as
// separate watch clients have.
func client(t *testing.T, s *framework.Server) *http.Client {
	tr := s.HTTPClient(t).Transport.(*http.Transport)
	return &http.Client{Transport: &http.Transport{TLSClientConfig: tr.TLSClientConfig.Clone(),
		TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}}
}

func do(ctx context.Context, c *http.Client, method, url, token string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(string(body))
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// listRV lists url as a reflector does (gzip accepted, as client-go
// does) and returns the list's resourceVersion, reading only the start of
// the body and discarding the rest unread, so that the benchmark's own
// CPU goes to the core rather than to decoding.
func listRV(ctx context.Context, c *http.Client, url, token string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept-Encoding", "gzip") // set by hand: the transport leaves the body compressed
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return "", fmt.Errorf("list: HTTP %d", resp.StatusCode)
	}
	var r io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		if r, err = gzip.NewReader(resp.Body); err != nil {
			return "", err
		}
	}
	head := make([]byte, 256)
	n, _ := io.ReadFull(r, head)
	_, err = io.Copy(io.Discard, resp.Body)
	m := rvPattern.FindSubmatch(head[:n])
	if m == nil {
		return "", fmt.Errorf("no resourceVersion in %q", head[:n])
	}
	return string(m[1]), err
}

var rvPattern = regexp.MustCompile(`"resourceVersion":"([0-9]+)"`)

// bigConfigMaps are the largest ConfigMaps tried, largest first: the
// issue's 100,000 labels (2.7 MB), then the largest the limits admit
// (1 MiB of data, 10,000 labels; 1,500 long labels).
func bigConfigMaps() []struct {
	what string
	body []byte
} {
	mk := func(labels map[string]string, data string) []byte {
		b, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "big", "labels": labels}, "data": map[string]string{"blob": data}})
		return b
	}
	many := map[string]string{}
	for i := 0; i < 100_000; i++ {
		many[fmt.Sprintf("label-%06d", i)] = fmt.Sprintf("value-%06d", i)
	}
	tenK := map[string]string{}
	for i := 0; i < 10_000; i++ {
		tenK[fmt.Sprintf("label-%06d", i)] = fmt.Sprintf("value-%06d", i)
	}
	long := map[string]string{}
	for i := 0; i < 1500; i++ {
		long[fmt.Sprintf("%s-%06d", strings.Repeat("k", 53), i)] = fmt.Sprintf("%s-%06d", strings.Repeat("v", 53), i)
	}
	return []struct {
		what string
		body []byte
	}{
		{"100,000 labels", mk(many, "")},
		{"10,000 labels and 1 MiB of data", mk(tenK, strings.Repeat("x", 1<<20-64))},
		{"1,500 long labels and 1 MiB of data", mk(long, strings.Repeat("x", 1<<20-64))},
	}
}

// rssCeiling stops the storm early when the core grows past it.
const rssCeiling = 6 << 30

// watchStorm stores the largest ConfigMap the core takes in a namespace,
// then for HARDEN_BENCH_SECONDS runs HARDEN_BENCH_WATCHERS clients that
// each list the namespace and watch it for a second, over and over (a
// reflector reconnecting), while one client creates small ConfigMaps in
// it; the core's RSS is sampled every 250 ms.
func watchStorm(t *testing.T) []string {
	seconds, watchers, objects := envInt("HARDEN_BENCH_SECONDS", 30), envInt("HARDEN_BENCH_WATCHERS", 200), envInt("HARDEN_BENCH_OBJECTS", 1)
	s := framework.StartServer(t)
	token := s.AdminToken(t)
	ns := s.BaseURL + "/clusters/harden-storm/api/v1/namespaces"
	admin := client(t, s)
	ctx := context.Background()
	if code, b, err := do(ctx, admin, "POST", ns, token, []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"storm"}}`)); err != nil || code != 201 {
		t.Fatalf("creating namespace storm: %d %v %s", code, err, b)
	}
	cms := ns + "/storm/configmaps"
	var stored string
	var size int
	var bigBody []byte
	for _, cm := range bigConfigMaps() {
		start := time.Now()
		reqCtx, cancel := context.WithTimeout(ctx, 70*time.Second)
		code, b, err := do(reqCtx, admin, "POST", cms, token, cm.body)
		cancel()
		t.Logf("creating a ConfigMap with %s (%d bytes): %d in %s %v %.200s", cm.what, len(cm.body), code, time.Since(start).Round(time.Millisecond), err, b)
		if err == nil && code == http.StatusCreated {
			stored, size, bigBody = cm.what, len(cm.body), cm.body
			break
		}
	}
	if stored == "" {
		t.Fatal("no big ConfigMap was stored")
	}
	for i := 1; i < objects; i++ {
		body := strings.Replace(string(bigBody), `"name":"big"`, fmt.Sprintf(`"name":"big-%d"`, i), 1)
		if code, b, err := do(ctx, admin, "POST", cms, token, []byte(body)); err != nil || code != http.StatusCreated {
			t.Fatalf("creating big ConfigMap %d: %d %v %.200s", i, code, err, b)
		}
	}
	// The watch clients are tenant bob, the writer tenant alice.
	rbac := s.BaseURL + "/clusters/harden-storm/apis/rbac.authorization.k8s.io/v1/namespaces/storm/"
	for _, o := range []struct{ kind, body string }{
		{"roles", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"cm"},"rules":[{"apiGroups":[""],"resources":["configmaps"],"verbs":["get","list","watch","create"]}]}`},
		{"rolebindings", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"cm"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"cm"},"subjects":[{"kind":"User","name":"bob"},{"kind":"User","name":"alice"}]}`},
	} {
		if code, b, err := do(ctx, admin, "POST", rbac+o.kind, token, []byte(o.body)); err != nil || code != http.StatusCreated {
			t.Fatalf("creating %s: %d %v %.200s", o.kind, code, err, b)
		}
	}
	bob, alice := s.UserToken(t, "bob"), s.UserToken(t, "alice")
	rss0, _ := bench.ReadRSS(s.PID)
	alone := writeFor(ctx, client(t, s), cms, alice, "alone", 5*time.Second)

	ctx, cancel := context.WithTimeout(ctx, time.Duration(seconds)*time.Second)
	defer cancel()
	var lists, watches, listErrs atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < watchers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := client(t, s)
			defer c.CloseIdleConnections()
			for ctx.Err() == nil {
				rv, err := listRV(ctx, c, cms, bob)
				if err != nil {
					if ctx.Err() == nil {
						listErrs.Add(1)
						time.Sleep(100 * time.Millisecond)
					}
					continue
				}
				lists.Add(1)
				wctx, wcancel := context.WithTimeout(ctx, time.Second)
				if _, _, err := do(wctx, c, "GET", cms+"?watch=true&allowWatchBookmarks=true&resourceVersion="+rv, bob, nil); err == nil || wctx.Err() != nil {
					watches.Add(1)
				}
				wcancel()
			}
		}()
	}
	var during writeResult
	wg.Add(1)
	go func() {
		defer wg.Done()
		during = writeFor(ctx, client(t, s), cms, alice, "storm", time.Duration(seconds)*time.Second)
	}()
	if f := os.Getenv("HARDEN_BENCH_CPU_PROFILE"); f != "" {
		go func() {
			path := "/debug/pprof/profile?seconds=10"
			if p := os.Getenv("HARDEN_BENCH_PPROF_PATH"); p != "" {
				time.Sleep(10 * time.Second)
				path = p
			}
			code, b, err := do(context.Background(), client(t, s), "GET", s.BaseURL+path, token, nil)
			if err == nil && code == http.StatusOK {
				_ = os.WriteFile(f, b, 0o644)
			}
		}()
	}
	var peak int64
	aborted := false
	tick := time.NewTicker(250 * time.Millisecond)
	for ctx.Err() == nil {
		select {
		case <-tick.C:
			if r, err := bench.ReadRSS(s.PID); err == nil && r > peak {
				peak = r
				if peak > rssCeiling && !aborted {
					// Spare the machine: stop the storm.
					aborted = true
					cancel()
				}
			}
		case <-ctx.Done():
		}
	}
	tick.Stop()
	wg.Wait()
	mib := func(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
	return []string{
		fmt.Sprintf("| watch storm: objects in the namespace | %d ConfigMap(s) with %s (%.1f MB of JSON each) |", objects, stored, float64(size)/1e6),
		fmt.Sprintf("| watch storm: %d clients (one tenant) each listing + watching 1 s, over and over, %d s | %d lists (%d failed), %d watches |", watchers, seconds, lists.Load(), listErrs.Load(), watches.Load()),
		fmt.Sprintf("| watch storm: core RSS before / peak | %s / %s%s |", mib(rss0), mib(peak), map[bool]string{true: fmt.Sprintf(" (storm stopped early: over %s)", mib(rssCeiling))}[aborted]),
		fmt.Sprintf("| watch storm: small ConfigMap creates (1 client, another tenant), 5 s before the storm | %s |", alone),
		fmt.Sprintf("| watch storm: small ConfigMap creates (1 client, another tenant) during the storm | %s |", during),
	}
}

type writeResult struct {
	n, failed int
	d         time.Duration
	lat       []time.Duration
}

func (r writeResult) String() string {
	if r.n == 0 {
		return fmt.Sprintf("0 in %s, %d failed", r.d.Round(time.Second), r.failed)
	}
	slices.Sort(r.lat)
	return fmt.Sprintf("%d in %s (%.1f/s, p50 %s, p99 %s), %d failed", r.n, r.d.Round(time.Second), float64(r.n)/r.d.Seconds(),
		r.lat[len(r.lat)/2].Round(time.Millisecond), r.lat[min(len(r.lat)-1, len(r.lat)*99/100)].Round(time.Millisecond), r.failed)
}

// writeFor creates small ConfigMaps one after the other for d.
func writeFor(ctx context.Context, c *http.Client, cms, token, prefix string, d time.Duration) writeResult {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	r := writeResult{d: d}
	for i := 0; ctx.Err() == nil; i++ {
		start := time.Now()
		body := fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s-%d"},"data":{"k":"v"}}`, prefix, i)
		code, _, err := do(ctx, c, "POST", cms, token, body)
		switch {
		case err == nil && code == http.StatusCreated:
			r.n++
			r.lat = append(r.lat, time.Since(start))
		case ctx.Err() == nil:
			r.failed++
		}
	}
	return r
}

// hungWebhook starts a core whose authorization webhook is a stopped
// process, and times HARDEN_BENCH_DENIED GETs (10 clients) that RBAC does
// not allow: each must be denied, and fast.
func hungWebhook(t *testing.T) []string {
	n := envInt("HARDEN_BENCH_DENIED", 2000)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), helperEnv+"="+addr)
	stdout, _ := helper.StdoutPipe()
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = helper.Process.Signal(syscall.SIGCONT)
		_ = helper.Process.Kill()
		_ = helper.Wait()
	})
	if _, err := io.ReadFull(stdout, make([]byte, len("listening"))); err != nil {
		t.Fatalf("the stopped webhook's listener: %v", err)
	}
	if err := helper.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "webhook.kubeconfig")
	if err := os.WriteFile(kubeconfig, fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters:
- name: rebac
  cluster: {server: "https://%s/authz", insecure-skip-tls-verify: true}
users:
- name: core
  user: {}
contexts:
- name: webhook
  context: {cluster: rebac, user: core}
current-context: webhook
`, addr), 0o600); err != nil {
		t.Fatal(err)
	}
	s := framework.StartServer(t, framework.WithExtraArgs("--authorization-webhook-config-file="+kubeconfig,
		"--authorization-webhook-cache-unauthorized-ttl=0s"))
	bob := s.UserToken(t, "bob")
	url := s.BaseURL + "/clusters/harden-hung/api/v1/namespaces/default/secrets"
	var mu sync.Mutex
	var lat []time.Duration
	codes := map[int]int{}
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < 10; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := client(t, s)
			for next.Add(1) <= int64(n) {
				t0 := time.Now()
				code, _, err := do(context.Background(), c, "GET", url, bob, nil)
				d := time.Since(t0)
				mu.Lock()
				if err != nil {
					code = -1
				}
				codes[code]++
				lat = append(lat, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	total := time.Since(start)
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		return lat[min(len(lat)-1, int(float64(len(lat))*p/100))].Round(100 * time.Microsecond)
	}
	slow := 0
	for _, d := range lat {
		if d >= time.Second {
			slow++
		}
	}
	return []string{
		fmt.Sprintf("| webhook SIGSTOPped: %d GETs RBAC does not allow (10 clients), answers | %v in %s |", n, codes, total.Round(time.Millisecond)),
		fmt.Sprintf("| webhook SIGSTOPped: latency p50 / p99 / p99.9 / max | %s / %s / %s / %s |", pct(50), pct(99), pct(99.9), lat[len(lat)-1].Round(time.Millisecond)),
		fmt.Sprintf("| webhook SIGSTOPped: requests that waited 1 s or more (the first per client, then one probe per back-off) | %d of %d |", slow, n),
	}
}
