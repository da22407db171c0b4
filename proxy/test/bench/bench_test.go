// Package bench measures the front proxy: what it adds to a GET (p50/p99
// through the proxy against straight to the shard) and how long a new
// workspace takes to become routable through it.
//
// Run with `make bench` or
// PROXY_BENCH_RUN=1 go test -run TestFrontProxyBench -v ./proxy/test/bench/
// (PROXY_BENCH_GETS and PROXY_BENCH_WORKSPACES size it; PROXY_BENCH_OUT
// names a file for the Markdown table).
package bench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

func TestMain(m *testing.M) {
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

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func httpClient(t *testing.T, caFile string) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 10}}
}

func get(c *http.Client, url, token string) (int, error) {
	code, _, err := getBody(c, url, token)
	return code, err
}

func getBody(c *http.Client, url, token string) (int, string, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b), err
}

func TestFrontProxyBench(t *testing.T) {
	if os.Getenv("PROXY_BENCH_RUN") == "" {
		t.Skip("set PROXY_BENCH_RUN=1 (make bench does)")
	}
	gets, workspaces := envInt("PROXY_BENCH_GETS", 2000), envInt("PROXY_BENCH_WORKSPACES", 20)
	p := framework.NewProxyPKI(t)
	shard := framework.StartServer(t, framework.WithExtraArgs(p.ShardArgs()...))
	fp := framework.StartFrontProxy(t, p, shard)
	token := shard.AdminToken(t)
	org := shard.CreateOrg(t, "proxybench")
	shard.KubectlFor(org.Path).Run(t, "create", "configmap", "bench", "-n", "default", "--from-literal=k=v")

	direct := httpClient(t, shard.RootDir+"/ca.crt")
	proxied := httpClient(t, p.ServingCA.CertFile)
	path := "/clusters/" + org.Path + "/api/v1/namespaces/default/configmaps/bench"
	measure := func(c *http.Client, base string) []time.Duration {
		for i := 0; i < 50; i++ { // warm the connections
			_, _ = get(c, base+path, token)
		}
		out := make([]time.Duration, 0, gets)
		for i := 0; i < gets; i++ {
			start := time.Now()
			code, err := get(c, base+path, token)
			if err != nil || code != http.StatusOK {
				t.Fatalf("GET %s: %d %v", base+path, code, err)
			}
			out = append(out, time.Since(start))
		}
		return out
	}
	// Interleaved rounds, so that machine noise hits both alike.
	var d, v []time.Duration
	for round := 0; round < 4; round++ {
		d = append(d, measure(direct, shard.BaseURL)...)
		v = append(v, measure(proxied, fp.URL)...)
	}

	// Index lag: workspaces created on the shard directly; the time from
	// Ready (seen on the shard) to the first routed answer of the proxy.
	var lags, routed []time.Duration
	k := shard.KubectlFor(org.Path)
	for i := 0; i < workspaces; i++ {
		name := fmt.Sprintf("lag-%d", i)
		k.RunStdin(t, fmt.Sprintf("apiVersion: tenancy.kcp.io/v1alpha1\nkind: Workspace\nmetadata:\n  name: %s\n", name), "create", "-f", "-")
		start := time.Now()
		var readyAt, routableAt time.Time
		deadline := start.Add(2 * time.Minute)
		for (readyAt.IsZero() || routableAt.IsZero()) && time.Now().Before(deadline) {
			if routableAt.IsZero() {
				if code, err := get(proxied, fp.URL+"/clusters/"+org.Path+":"+name+"/api", token); err == nil && code != http.StatusForbidden {
					routableAt = time.Now()
				}
			}
			if readyAt.IsZero() {
				code, body, err := getBody(direct, shard.BaseURL+"/clusters/"+org.Path+"/apis/tenancy.kcp.io/v1alpha1/workspaces/"+name, token)
				if err == nil && code == http.StatusOK && strings.Contains(body, `"phase":"Ready"`) {
					readyAt = time.Now()
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
		if readyAt.IsZero() || routableAt.IsZero() {
			t.Fatalf("workspace %s: Ready at %v, routable at %v", name, readyAt, routableAt)
		}
		lags = append(lags, max(0, routableAt.Sub(readyAt)))
		routed = append(routed, routableAt.Sub(start))
	}

	// Deletes: from the Workspace gone on the shard (404) to the proxy
	// refusing its path (403).
	var goneLags []time.Duration
	for i := 0; i < workspaces; i++ {
		name := fmt.Sprintf("lag-%d", i)
		k.Run(t, "delete", "workspace", name, "--wait=false")
		var goneAt, refusedAt time.Time
		deadline := time.Now().Add(2 * time.Minute)
		for (goneAt.IsZero() || refusedAt.IsZero()) && time.Now().Before(deadline) {
			if refusedAt.IsZero() {
				if code, err := get(proxied, fp.URL+"/clusters/"+org.Path+":"+name+"/api", token); err == nil && code == http.StatusForbidden {
					refusedAt = time.Now()
				}
			}
			if goneAt.IsZero() {
				if code, err := get(direct, shard.BaseURL+"/clusters/"+org.Path+"/apis/tenancy.kcp.io/v1alpha1/workspaces/"+name, token); err == nil && code == http.StatusNotFound {
					goneAt = time.Now()
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
		if goneAt.IsZero() || refusedAt.IsZero() {
			t.Fatalf("workspace %s: gone at %v, refused at %v", name, goneAt, refusedAt)
		}
		goneLags = append(goneLags, max(0, refusedAt.Sub(goneAt)))
	}

	ms := func(x time.Duration) string { return fmt.Sprintf("%.2f ms", float64(x.Microseconds())/1000) }
	var b strings.Builder
	fmt.Fprintf(&b, "| front proxy | p50 | p99 |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| GET configmap straight to the shard (%d) | %s | %s |\n", len(d), ms(percentile(d, .5)), ms(percentile(d, .99)))
	fmt.Fprintf(&b, "| GET configmap through the front proxy (%d) | %s | %s |\n", len(v), ms(percentile(v, .5)), ms(percentile(v, .99)))
	fmt.Fprintf(&b, "| added by the proxy | %s | %s |\n", ms(percentile(v, .5)-percentile(d, .5)), ms(percentile(v, .99)-percentile(d, .99)))
	fmt.Fprintf(&b, "| workspace Ready -> routable through the proxy (%d; 0 = routable first) | %s | %s |\n", len(lags), ms(percentile(lags, .5)), ms(percentile(lags, .99)))
	fmt.Fprintf(&b, "| workspace created -> routable through the proxy (%d) | %s | %s |\n", len(routed), ms(percentile(routed, .5)), ms(percentile(routed, .99)))
	fmt.Fprintf(&b, "| workspace deleted (404 on the shard) -> refused by the proxy (%d; 0 = refused first) | %s | %s |\n", len(goneLags), ms(percentile(goneLags, .5)), ms(percentile(goneLags, .99)))
	t.Log("\n" + b.String())
	if out := os.Getenv("PROXY_BENCH_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
