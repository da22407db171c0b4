package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshplane/meshplane/platform/launcher"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// outcome is how one request ended.
type outcome int

const (
	answered  outcome = iota // 2xx
	forbidden                // 403
	refused                  // no HTTP answer: connection refused, reset, timed out
	otherCode                // any other status
)

// probe is one kind of request the traffic repeats, as one user.
type probe struct {
	name, url, token string
	// rbacAllows: RBAC alone allows it (it must keep working while
	// OpenFGA or the webhook is away); otherwise neither RBAC nor OpenFGA
	// allows it, and a 2xx answer is a leak.
	rbacAllows bool
}

// result is one request of a probe.
type result struct {
	probe int
	at    time.Time // when the answer (or the error) came
	out   outcome
}

// traffic runs one client per probe, a request every 100 ms, until stop.
type traffic struct {
	mu      sync.Mutex
	results []result
	stop    chan struct{}
	done    sync.WaitGroup
}

func startTraffic(probes []probe) *traffic {
	tr := &traffic{stop: make(chan struct{})}
	for i, p := range probes {
		tr.done.Add(1)
		go func() {
			defer tr.done.Done()
			hc := probeClient()
			defer hc.CloseIdleConnections()
			// Bounded: at most 10 a second, and at most 20,000 in all.
			for range 20000 {
				select {
				case <-tr.stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
				out := do(hc, p)
				tr.mu.Lock()
				tr.results = append(tr.results, result{probe: i, at: time.Now(), out: out})
				tr.mu.Unlock()
			}
		}()
	}
	return tr
}

// probeClient is a client of the platform's local core or proxy.
func probeClient() *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the platform's local serving certificate
}

func do(hc *http.Client, p probe) outcome {
	req, err := http.NewRequest(http.MethodGet, p.url, nil)
	if err != nil {
		return otherCode
	}
	req.Header.Set("Authorization", "Bearer "+p.token)
	resp, err := hc.Do(req)
	if err != nil {
		return refused
	}
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return answered
	case resp.StatusCode == http.StatusForbidden:
		return forbidden
	}
	return otherCode
}

func (tr *traffic) end() []result {
	close(tr.stop)
	tr.done.Wait()
	return tr.results
}

// phase is what happened to the traffic while one component was killed
// and restarted.
type phase struct {
	component        string
	killed, readyAt  time.Time
	requests         int
	failedInWindow   int // RBAC-allowed requests not answered 2xx between the kill and ready again
	failedBeyond     int // ... outside that window
	leaks            int // requests neither RBAC nor OpenFGA allows answered 2xx
	restartsObserved int
}

// TestSupervision kills each component of a running platform with SIGKILL
// in turn, under traffic: the launcher starts it again (a restart in
// status.json and one log line each), the other components keep running,
// what RBAC alone allows keeps being answered (no refusal while OpenFGA,
// the webhook, an operator or the gateway is away; only during the
// core's own restart), nothing neither RBAC nor OpenFGA allows is ever
// answered, and the platform works afterwards: the webhook reaches
// OpenFGA (with its key) and the operators make a new organization. The
// platform's OpenFGA refuses calls without its preshared key. Ctrl-C then
// stops everything, with no restart.
func TestSupervision(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	base := freeBase(t)
	p := startPlatform(t, root, base)
	env := p.waitReady(t)
	kubeconfig, coreURL := env["KUBECONFIG"], env["CORE_URL"]

	requireOpenFGAKey(t, env, base)

	status, err := launcher.ReadStatus(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range status.Components {
		if c.State != launcher.StateRunning || c.Restarts != 0 || c.PID == 0 {
			t.Errorf("status of %s after the start: %+v, want running, no restart", c.Name, c)
		}
	}

	// alice founds acme: an OpenFGA store whose owner she is.
	mustKubectl(t, kubeconfig, "--context", "alice", "create", "-f", filepath.Join("testdata", "org-account.yaml"))
	waitAccountReady(t, kubeconfig, "acme")
	orgs := coreURL + "/clusters/root:orgs"
	eventuallyKubectl(t, kubeconfig, "--context", "root", "--server", orgs, "get", "store", "acme")
	mustKubectl(t, kubeconfig, "--context", "root", "--server", orgs, "wait", "--for=condition=Ready", "store/acme", "--timeout=120s")
	acme := mustKubectl(t, kubeconfig, "--context", "root", "--server", orgs, "get", "workspace", "acme", "-o", "jsonpath={.spec.cluster}")
	webhook := newWebhookClient(t, root, env["REBAC_AUTHZ_WEBHOOK_URL"])
	webhook.waitOwnerAllowed(t, "alice", acme)

	tokens := demoTokens(t, kubeconfig)
	probes := []probe{
		{name: "bob reads API discovery in root:orgs (RBAC allows)", url: orgs + "/apis/tenancy.kcp.io/v1alpha1", token: tokens["bob"], rbacAllows: true},
		{name: "bob lists secrets in root:orgs", url: orgs + "/api/v1/namespaces/default/secrets", token: tokens["bob"]},
		{name: "bob lists configmaps in alice's org", url: coreURL + "/clusters/root:orgs:acme/api/v1/namespaces/default/configmaps", token: tokens["bob"]},
	}
	for _, pr := range probes {
		want := forbidden
		if pr.rbacAllows {
			want = answered
		}
		if got := do(probeClient(), pr); got != want {
			t.Fatalf("%s before any kill: outcome %d, want %d", pr.name, got, want)
		}
	}

	var phases []phase
	for _, name := range []string{"openfga", "rebac-authz-webhook", "account-operator", "security-operator", "graphql", "core"} {
		ph := killAndWait(t, root, name, probes)
		phases = append(phases, ph)
		// The platform works again: the webhook answers from OpenFGA.
		webhook.waitOwnerAllowed(t, "alice", acme)
		if name == "core" {
			// The core wrote admin.kubeconfig afresh; the launcher added
			// the demo users' contexts back.
			if out := mustKubectl(t, kubeconfig, "--context", "alice", "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"); out != "alice" {
				t.Errorf("after the core's restart alice's context authenticates as %q", out)
			}
		}
	}

	t.Logf("kill -9 under traffic (%d clients, a request each 100 ms):", len(probes))
	t.Logf("%-20s %8s %9s %17s %14s %6s", "component", "requests", "restarted", "refused in window", "refused beyond", "leaks")
	for _, ph := range phases {
		t.Logf("%-20s %8d %8.1fs %17d %14d %6d", ph.component, ph.requests, ph.readyAt.Sub(ph.killed).Seconds(), ph.failedInWindow, ph.failedBeyond, ph.leaks)
	}
	for _, ph := range phases {
		if ph.leaks != 0 {
			t.Errorf("%s killed: %d requests that neither RBAC nor OpenFGA allows were answered", ph.component, ph.leaks)
		}
		if ph.restartsObserved != 1 {
			t.Errorf("%s: %d restarts counted, want 1", ph.component, ph.restartsObserved)
		}
		// Only the core serves the requests: while any other component is
		// away, what RBAC allows is answered throughout.
		if ph.component != "core" && ph.failedInWindow+ph.failedBeyond != 0 {
			t.Errorf("%s killed: %d RBAC-allowed requests failed", ph.component, ph.failedInWindow+ph.failedBeyond)
		}
		if ph.component == "core" && ph.failedBeyond != 0 {
			t.Errorf("core killed: %d RBAC-allowed requests failed outside its restart window", ph.failedBeyond)
		}
	}
	// One log line per restart (an operator may have restarted more than
	// once, e.g. while the core was away: the status file counts them all).
	now, err := launcher.ReadStatus(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range now.Components {
		if n := strings.Count(p.out.String(), "| "+c.Name+" (pid "); n != c.Restarts {
			t.Errorf("%d log lines for the %d restarts of %s", n, c.Restarts, c.Name)
		}
	}

	// The operators still work: bob founds an org.
	org := strings.ReplaceAll(mustRead(t, filepath.Join("testdata", "org-account.yaml")), "name: acme", "name: bobcorp")
	kubectlStdin(t, kubeconfig, org, "--context", "bob", "create", "-f", "-")
	waitAccountReady(t, kubeconfig, "bobcorp", "--context", "bob") // its founder: outsiders no longer read it
	eventuallyKubectl(t, kubeconfig, "--context", "root", "--server", orgs, "get", "store", "bobcorp")
	mustKubectl(t, kubeconfig, "--context", "root", "--server", orgs, "wait", "--for=condition=Ready", "store/bobcorp", "--timeout=120s")

	// `meshplane-platform status` shows every component running.
	out, err := exec.Command(launcherBin, "status", "--root-directory", root).CombinedOutput()
	if err != nil {
		t.Errorf("meshplane-platform status: %v\n%s", err, out)
	}
	for _, ph := range phases {
		if !strings.Contains(string(out), ph.component) {
			t.Errorf("meshplane-platform status does not list %s:\n%s", ph.component, out)
		}
	}

	// Ctrl-C stops everything; nothing is started again.
	status, err = launcher.ReadStatus(root)
	if err != nil {
		t.Fatal(err)
	}
	p.stop(t)
	after, err := launcher.ReadStatus(root)
	if err != nil {
		t.Fatal(err)
	}
	if !after.Stopped {
		t.Error("status.json does not say stopped after Ctrl-C")
	}
	for _, c := range status.Components {
		if syscall.Kill(c.PID, 0) == nil {
			t.Errorf("%s (pid %d) still runs after the launcher stopped", c.Name, c.PID)
		}
		if a, _ := after.Find(c.Name); a.Restarts != c.Restarts || a.State != launcher.StateStopped {
			t.Errorf("%s after Ctrl-C: %+v, want stopped with %d restarts", c.Name, a, c.Restarts)
		}
	}
	if out, err := exec.Command(launcherBin, "status", "--root-directory", root).CombinedOutput(); err == nil {
		t.Errorf("meshplane-platform status of a stopped platform exits 0:\n%s", out)
	}
}

// TestSupervisionShards: on a sharded platform (--shards 2) shard b and
// the front proxy are started again after kill -9; requests to the root
// shard through the proxy keep being answered while shard b is away, and
// a workspace's data on shard b is there after its restart.
func TestSupervisionShards(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sharded")
	p := startPlatform(t, root, freeBase(t), "--shards", "2")
	env := p.waitReady(t)
	kubeconfig, proxy := env["KUBECONFIG"], env["FRONT_PROXY_URL"]

	mustKubectl(t, kubeconfig, "label", "shard", "b", "shard=b")
	k := framework.PluginKubectl(t, kubeconfig, "root", "")
	k.RunStdin(t, framework.PinnedWorkspace("onb", "b", ""), "apply", "-f", "-")
	framework.WaitWorkspaceReady(t, k, "onb")
	mustKubectl(t, kubeconfig, "--server", proxy+"/clusters/root:onb", "create", "configmap", "kept-on-b")

	tokens := demoTokens(t, kubeconfig)
	orgs := proxy + "/clusters/root:orgs"
	probes := []probe{
		{name: "bob reads API discovery in root:orgs through the proxy (RBAC allows)", url: orgs + "/apis/tenancy.kcp.io/v1alpha1", token: tokens["bob"], rbacAllows: true},
		{name: "bob lists secrets in root:orgs through the proxy", url: orgs + "/api/v1/namespaces/default/secrets", token: tokens["bob"]},
	}
	var phases []phase
	for _, name := range []string{"shard-b", "front-proxy"} {
		phases = append(phases, killAndWait(t, root, name, probes))
	}
	for _, ph := range phases {
		t.Logf("%-12s requests %d, ready again after %.1fs, RBAC-allowed refused in window %d, beyond %d, leaks %d",
			ph.component, ph.requests, ph.readyAt.Sub(ph.killed).Seconds(), ph.failedInWindow, ph.failedBeyond, ph.leaks)
		if ph.leaks != 0 || ph.restartsObserved != 1 || ph.failedBeyond != 0 {
			t.Errorf("%s: %+v, want one restart, no leak, no failure outside its restart window", ph.component, ph)
		}
		if ph.component == "shard-b" && ph.failedInWindow != 0 {
			t.Errorf("shard b killed: %d requests to the root shard failed", ph.failedInWindow)
		}
	}
	framework.Eventually(t, time.Minute, 500*time.Millisecond, "the configmap on shard b after its restart", func() (bool, string) {
		out, err := kubectl(t, kubeconfig, "--server", proxy+"/clusters/root:onb", "get", "configmap", "kept-on-b", "-o", "name")
		return err == nil && out == "configmap/kept-on-b", out
	})
	p.stop(t)
}

// killAndWait kills component name with SIGKILL under traffic and waits
// until the launcher reports it running again, then lets the traffic run
// three more seconds.
func killAndWait(t *testing.T, root, name string, probes []probe) phase {
	t.Helper()
	// It may be restarting already (an operator that lost OpenFGA or the
	// core in an earlier phase): wait until it runs.
	var c launcher.ComponentStatus
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		before, err := launcher.ReadStatus(root)
		if err != nil {
			t.Fatal(err)
		}
		var ok bool
		if c, ok = before.Find(name); !ok {
			t.Fatalf("no %s in the status file", name)
		}
		if c.State == launcher.StateRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is not running before the kill: %+v", name, c)
		}
	}
	tr := startTraffic(probes)
	time.Sleep(2 * time.Second)
	ph := phase{component: name, killed: time.Now()}
	if err := syscall.Kill(c.PID, syscall.SIGKILL); err != nil {
		tr.end()
		t.Fatalf("kill -9 %s (pid %d): %v", name, c.PID, err)
	}
	deadline := time.Now().Add(4 * time.Minute)
	for {
		s, err := launcher.ReadStatus(root)
		if err == nil {
			if now, _ := s.Find(name); now.Restarts > c.Restarts && now.State == launcher.StateRunning {
				ph.readyAt, ph.restartsObserved = time.Now(), now.Restarts-c.Restarts
				if now.PID == c.PID {
					t.Errorf("%s restarted with the same pid %d", name, c.PID)
				}
				break
			}
		}
		if time.Now().After(deadline) {
			tr.end()
			t.Fatalf("%s not running again 4m after kill -9 (status %+v, %v)", name, s, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(3 * time.Second)
	for _, r := range tr.end() {
		ph.requests++
		pr := probes[r.probe]
		switch {
		case !pr.rbacAllows && r.out == answered:
			ph.leaks++
		case pr.rbacAllows && r.out != answered && !r.at.Before(ph.killed) && !r.at.After(ph.readyAt):
			ph.failedInWindow++
		case pr.rbacAllows && r.out != answered:
			ph.failedBeyond++
		}
	}
	return ph
}

// requireOpenFGAKey: the platform's OpenFGA refuses calls without its key
// on its HTTP and gRPC ports; the key file is 0600 and opens it.
func requireOpenFGAKey(t *testing.T, env map[string]string, base int) {
	t.Helper()
	keyFile := env["OPENFGA_PRESHARED_KEY_FILE"]
	if keyFile == "" {
		t.Fatal("platform.env names no OPENFGA_PRESHARED_KEY_FILE")
	}
	st, err := os.Stat(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", keyFile, st.Mode().Perm())
	}
	if code := openFGAGet(t, env["OPENFGA_URL"]+"/stores", ""); code != http.StatusUnauthorized {
		t.Errorf("GET /stores on OpenFGA's HTTP port without the key: %d, want 401", code)
	}
	if code := openFGAGet(t, env["OPENFGA_URL"]+"/stores", "Bearer not-the-key"); code != http.StatusUnauthorized {
		t.Errorf("GET /stores on OpenFGA's HTTP port with a wrong key: %d, want 401", code)
	}
	withKey := "Bearer " + strings.TrimSpace(mustRead(t, keyFile))
	if code := openFGAGet(t, env["OPENFGA_URL"]+"/stores", withKey); code != http.StatusOK {
		t.Errorf("GET /stores on OpenFGA's HTTP port with the key: %d, want 200", code)
	}
	grpcAddr := fmt.Sprintf("127.0.0.1:%d", base+7)
	if err := openFGAGRPCListStores(grpcAddr, ""); err == nil {
		t.Error("OpenFGA's gRPC port listed the stores without the key")
	} else {
		t.Logf("gRPC without the key: %v", err)
	}
	if err := openFGAGRPCListStores(grpcAddr, withKey); err != nil {
		t.Errorf("OpenFGA's gRPC ListStores with the key: %v", err)
	}
}

func openFGAGet(t *testing.T, url, authorization string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("OpenFGA at %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// webhookClient posts SubjectAccessReviews to the rebac-authz-webhook as
// the core does, with the core's client certificate.
type webhookClient struct {
	url string
	hc  *http.Client
}

func newWebhookClient(t *testing.T, root, url string) *webhookClient {
	t.Helper()
	dir := filepath.Join(root, "rebac-authz-webhook")
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "core-client.crt"), filepath.Join(dir, "core-client.key"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(mustRead(t, filepath.Join(dir, "ca.crt"))))
	return &webhookClient{url: url, hc: &http.Client{Timeout: 5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}}}
}

// ownerAllowed asks whether user may create configmaps in namespace
// default of logical cluster cluster: OpenFGA's answer for an org owner.
func (w *webhookClient) ownerAllowed(user, cluster string) (bool, string) {
	sar := map[string]any{"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
		"spec": map[string]any{"user": user, "groups": []string{"system:authenticated"},
			"extra":              map[string][]string{"authorization.kcp.io/cluster-name": {cluster}},
			"resourceAttributes": map[string]string{"verb": "create", "version": "v1", "resource": "configmaps", "namespace": "default"}}}
	body, _ := json.Marshal(sar)
	resp, err := w.hc.Post(w.url, "application/json", bytes.NewReader(body))
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	var out struct {
		Status struct {
			Allowed bool   `json:"allowed"`
			Reason  string `json:"reason"`
			Error   string `json:"evaluationError"`
		} `json:"status"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return false, fmt.Sprintf("HTTP %d: %v", resp.StatusCode, err)
	}
	return out.Status.Allowed, fmt.Sprintf("HTTP %d, %+v", resp.StatusCode, out.Status)
}

func (w *webhookClient) waitOwnerAllowed(t *testing.T, user, cluster string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	last := ""
	for ctx.Err() == nil {
		ok, why := w.ownerAllowed(user, cluster)
		if ok {
			return
		}
		last = why
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("the webhook does not allow %s, owner of cluster %s, to create configmaps within 2m (last: %s)", user, cluster, last)
}

// demoTokens reads the demo users' tokens from the admin kubeconfig.
func demoTokens(t *testing.T, kubeconfig string) map[string]string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, u := range []string{"alice", "bob"} {
		ai, ok := cfg.AuthInfos[u]
		if !ok || ai.Token == "" {
			t.Fatalf("%s has no token for %s", kubeconfig, u)
		}
		out[u] = ai.Token
	}
	return out
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// openFGAGRPCListStores calls OpenFGA's gRPC ListStores at addr with the
// Authorization header authorization ("": none), as any local process
// could: gRPC over plaintext HTTP/2 spoken by net/http (an empty
// ListStoresRequest is an empty message). It returns nil when the call
// succeeded.
func openFGAGRPCListStores(addr, authorization string) error {
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Protocols: &protocols}}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/openfga.v1.OpenFGAService/ListStores", bytes.NewReader([]byte{0, 0, 0, 0, 0}))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	code := resp.Header.Get("Grpc-Status") // a trailers-only answer
	if code == "" {
		code = resp.Trailer.Get("Grpc-Status")
	}
	if resp.StatusCode != http.StatusOK || code != "0" {
		return fmt.Errorf("HTTP %d, grpc-status %s (%s)", resp.StatusCode, code, resp.Header.Get("Grpc-Message")+resp.Trailer.Get("Grpc-Message"))
	}
	if len(body) < 5 {
		return fmt.Errorf("grpc-status 0 without a message")
	}
	return nil
}

// kubectlStdin runs kubectl with stdin.
func kubectlStdin(t *testing.T, kubeconfig, stdin string, args ...string) {
	t.Helper()
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
