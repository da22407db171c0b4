// Package bench measures what a workspace mount adds: GET and LIST of 500
// configmaps sent straight to the target (a workspace of Meshplane B), to
// the example proxy's mount URL, and through the mounted workspace of
// Meshplane A; and how fast a Workspace follows its mount object.
//
// Run with `make bench` or
// MOUNTS_BENCH_RUN=1 go test -run TestMountsBench -v ./examples/mounts/test/bench/
// (MOUNTS_BENCH_GETS, MOUNTS_BENCH_LISTS, MOUNTS_BENCH_FLIPS size it;
// MOUNTS_BENCH_OUT names a file for the Markdown table).
package bench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/process"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

var certDir string

// proxyPort is the example proxy's port, chosen before the shared core
// starts: its --mount-allowed-hosts names exactly 127.0.0.1:proxyPort.
var proxyPort int

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "meshplane-mounts-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	certDir = filepath.Join(dir, "certs")
	ports, err := process.FreePorts(1)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	proxyPort = ports[0]
	code := framework.RunMain(m, framework.WithExtraArgs("--mount-ca-file", filepath.Join(certDir, "serving.crt"),
		"--mount-allowed-hosts", "127.0.0.1:"+strconv.Itoa(proxyPort)))
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// endpoint is one way to reach the target's configmaps.
type endpoint struct {
	name    string
	base    string // URL up to /api
	client  *http.Client
	headers http.Header
}

func (e endpoint) get(t *testing.T, path string) time.Duration {
	req, _ := http.NewRequest(http.MethodGet, e.base+path, nil)
	req.Header = e.headers.Clone()
	req.Header.Set("Accept", "application/json")
	start := time.Now()
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatalf("%s: GET %s: %v", e.name, path, err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	d := time.Since(start)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: GET %s: %d %s", e.name, path, resp.StatusCode, body)
	}
	return d
}

func tlsClient(t *testing.T, caFile string, cert *tls.Certificate) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	cfg := &tls.Config{RootCAs: pool}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, MaxIdleConnsPerHost: 8}}
}

const mountpointCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: mountpoints.bench.mounts.meshplane.io}
spec:
  group: bench.mounts.meshplane.io
  names: {kind: Mountpoint, plural: mountpoints, singular: mountpoint}
  scope: Cluster
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`

func TestMountsBench(t *testing.T) {
	if os.Getenv("MOUNTS_BENCH_RUN") == "" {
		t.Skip("a benchmark: run by `make bench` (set MOUNTS_BENCH_RUN=1 to run it with go test)")
	}
	gets, lists, flips := envInt("MOUNTS_BENCH_GETS", 1000), envInt("MOUNTS_BENCH_LISTS", 50), envInt("MOUNTS_BENCH_FLIPS", 20)
	a := framework.SharedServer(t)
	b := framework.StartServer(t)

	// B: 500 configmaps in a workspace.
	target := b.CreateOrg(t, "target")
	var manifest strings.Builder
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&manifest, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%03d, namespace: default}\ndata: {i: \"%d\", payload: %q}\n", i, i, strings.Repeat("x", 200))
	}
	b.KubectlFor(target.Path).RunStdin(t, manifest.String(), "create", "-f", "-")

	// A: the KubeCluster and its mounted workspace, served by the example.
	org := a.CreateOrg(t, "bench")
	inOrg := a.KubectlFor(org.Path)
	repo, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	inOrg.Run(t, "apply", "-f", filepath.Join(repo, "examples", "mounts", "config", "kubeclusters.yaml"))
	inOrg.RunStdin(t, mountpointCRD, "apply", "-f", "-")
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "the CRDs to be served", func() (bool, string) {
		_, e1, err1 := inOrg.RunErr(t, "get", "kubeclusters")
		_, e2, err2 := inOrg.RunErr(t, "get", "mountpoints")
		return err1 == nil && err2 == nil, e1 + e2
	})
	inOrg.Run(t, "create", "secret", "generic", "b", "-n", "default", "--from-file=kubeconfig="+b.WriteAdminKubeconfig(t, target.Path))
	inOrg.RunStdin(t, `apiVersion: mounts.examples.meshplane.io/v1alpha1
kind: KubeCluster
metadata: {name: b, annotations: {experimental.tenancy.kcp.io/is-mount: "true"}}
spec: {secretRef: {namespace: default, name: b}}
`, "create", "-f", "-")
	bin, err := framework.Binary("kubecluster-mounts", "examples/mounts", "./cmd/kubecluster-mounts")
	if err != nil {
		t.Fatal(err)
	}
	log := &process.Buffer{}
	cmd := exec.Command(bin, "--kubeconfig", a.WriteAdminKubeconfig(t, org.Path), "--listen-address", "127.0.0.1:"+strconv.Itoa(proxyPort),
		"--client-ca-file", filepath.Join(a.RootDir, "ca.crt"), "--cert-dir", certDir,
		"--target-allowed-hosts", "127.0.0.1:"+strconv.Itoa(b.Port))
	cmd.Stdout, cmd.Stderr = log, log
	p, err := process.StartProcess(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(5 * time.Second) })
	inOrg.RunStdin(t, `apiVersion: tenancy.kcp.io/v1alpha1
kind: Workspace
metadata: {name: b}
spec: {mount: {ref: {apiVersion: mounts.examples.meshplane.io/v1alpha1, kind: KubeCluster, name: b}}}
`, "create", "-f", "-")
	framework.Eventually(t, 60*time.Second, 100*time.Millisecond, "the mounted workspace to be Ready", func() (bool, string) {
		out, _, _ := inOrg.RunErr(t, "get", "workspace", "b", "-o", "jsonpath={.status.phase}")
		return out == "Ready", out + "\n" + log.String()
	})
	mountURL := inOrg.Run(t, "get", "kubecluster", "b", "-o", "jsonpath={.status.URL}")

	clientCert, err := tls.LoadX509KeyPair(filepath.Join(a.RootDir, "mount-client.crt"), filepath.Join(a.RootDir, "mount-client.key"))
	if err != nil {
		t.Fatal(err)
	}
	auth := func(token string) http.Header { return http.Header{"Authorization": {"Bearer " + token}} }
	endpoints := []endpoint{
		{name: "directly to the target (B)", base: b.ClusterURL(target.Path), client: tlsClient(t, filepath.Join(b.RootDir, "ca.crt"), nil), headers: auth(b.AdminToken(t))},
		{name: "to the mount URL (example proxy -> B)", base: mountURL, client: tlsClient(t, filepath.Join(certDir, "serving.crt"), &clientCert),
			headers: http.Header{"X-Meshplane-Mount-Cluster": {org.Cluster}, "X-Meshplane-Mount-Ref": {"mounts.examples.meshplane.io/KubeCluster/b"}}},
		{name: "through the mounted workspace (A -> proxy -> B)", base: a.ClusterURL(org.Path + ":b"), client: tlsClient(t, filepath.Join(a.RootDir, "ca.crt"), nil), headers: auth(a.AdminToken(t))},
	}

	type result struct{ get, list []time.Duration }
	results := make([]result, len(endpoints))
	// Warm up every path, then interleave rounds so that noise from other
	// processes hits all three alike.
	for _, e := range endpoints {
		for j := 0; j < 20; j++ {
			e.get(t, fmt.Sprintf("/api/v1/namespaces/default/configmaps/cm-%03d", j))
		}
		e.get(t, "/api/v1/namespaces/default/configmaps")
	}
	for round := 0; round < gets; round++ {
		for i, e := range endpoints {
			results[i].get = append(results[i].get, e.get(t, fmt.Sprintf("/api/v1/namespaces/default/configmaps/cm-%03d", round%500)))
		}
	}
	for round := 0; round < lists; round++ {
		for i, e := range endpoints {
			results[i].list = append(results[i].list, e.get(t, "/api/v1/namespaces/default/configmaps"))
		}
	}

	// How fast the Workspace follows its mount object: flip a Mountpoint
	// between Ready and Connecting and time the Workspace's phase.
	inOrg.RunStdin(t, `apiVersion: bench.mounts.meshplane.io/v1alpha1
kind: Mountpoint
metadata: {name: flip, annotations: {experimental.tenancy.kcp.io/is-mount: "true"}}
`, "create", "-f", "-")
	inOrg.RunStdin(t, `apiVersion: tenancy.kcp.io/v1alpha1
kind: Workspace
metadata: {name: flip}
spec: {mount: {ref: {apiVersion: bench.mounts.meshplane.io/v1alpha1, kind: Mountpoint, name: flip}}}
`, "create", "-f", "-")
	follow := measureFollow(t, a, org.Path, flips, mountURL)

	var out strings.Builder
	fmt.Fprintf(&out, "Workspace mounts (examples/mounts): %d GETs of one configmap and %d LISTs of 500 configmaps (about 150 KB of JSON) per path, sequential, one keep-alive connection per path, rounds interleaved; core A, core B and the example proxy on one machine.\n\n", gets, lists)
	fmt.Fprintln(&out, "| path | GET p50 | GET p99 | LIST 500 p50 | LIST 500 p99 |")
	fmt.Fprintln(&out, "| --- | --- | --- | --- | --- |")
	for i, e := range endpoints {
		g, l := summarize(results[i].get), summarize(results[i].list)
		fmt.Fprintf(&out, "| %s | %s | %s | %s | %s |\n", e.name, ms(g.p50), ms(g.p99), ms(l.p50), ms(l.p99))
	}
	g0, g1, g2 := summarize(results[0].get), summarize(results[1].get), summarize(results[2].get)
	l1, l2 := summarize(results[1].list), summarize(results[2].list)
	fmt.Fprintf(&out, "\nAdded by the core's mount proxy (through the mounted workspace minus the mount URL): GET p50 %s, p99 %s; LIST 500 p50 %s. Added by the whole mount (core + example proxy) over the target: GET p50 %s.\n",
		ms(g2.p50-g1.p50), ms(g2.p99-g1.p99), ms(l2.p50-l1.p50), ms(g2.p50-g0.p50))
	f := summarize(follow)
	fmt.Fprintf(&out, "\nWorkspace phase following its mount object (status patch until a watch sees the new phase, %d flips): p50 %s, max %s.\n", len(follow), ms(f.p50), ms(f.max))
	t.Log("\n" + out.String())
	if path := os.Getenv("MOUNTS_BENCH_OUT"); path != "" {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type stats struct{ p50, p99, max time.Duration }

func summarize(d []time.Duration) stats {
	s := slices.Clone(d)
	slices.Sort(s)
	at := func(p float64) time.Duration { return s[int(float64(len(s)-1)*p/100+0.5)] }
	return stats{p50: at(50), p99: at(99), max: s[len(s)-1]}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

// measureFollow flips the Mountpoint flip between Ready and Connecting and
// returns, per flip, the time from the status write until a watch on the
// Workspace flip sees the matching phase.
func measureFollow(t *testing.T, s *framework.Server, org string, flips int, url string) []time.Duration {
	t.Helper()
	k := s.KubectlFor(org)
	watch := k.Background(t, 10*time.Minute, "get", "workspace", "flip", "--watch", "--output-watch-events", "-o", "jsonpath={.object.status.phase}{\"\\n\"}")
	defer watch.Stop()
	var out []time.Duration
	phases := map[bool]string{true: "Ready", false: "Unavailable"}
	seen := 0
	for i := 0; i < flips; i++ {
		ready := i%2 == 0
		mountPhase := map[bool]string{true: "Ready", false: "Connecting"}[ready]
		patch := fmt.Sprintf(`{"status":{"phase":%q,"URL":%q}}`, mountPhase, url)
		start := time.Now()
		cmd := exec.CommandContext(context.Background(), framework.KubectlBinary(), append(append([]string{"--kubeconfig", k.Kubeconfig}, k.GlobalArgs...),
			"patch", "mountpoint", "flip", "--subresource=status", "--type=merge", "-p", patch)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("patching the mount object: %v\n%s", err, b)
		}
		want := phases[ready]
		framework.Eventually(t, 30*time.Second, 5*time.Millisecond, "the workspace to become "+want, func() (bool, string) {
			lines := strings.Split(strings.TrimSpace(watch.Stdout()), "\n")
			for j := seen; j < len(lines); j++ {
				if lines[j] == want {
					seen = j + 1
					return true, ""
				}
			}
			return false, watch.Stdout()
		})
		// kubectl's own start-up is in the figure: subtract nothing,
		// report as measured (an upper bound).
		out = append(out, time.Since(start))
	}
	return out
}
