// Package bench measures the rebac-authz-webhook (make bench; skipped
// unless REBAC_BENCH_RUN=1): SubjectAccessReview decisions per second and
// latency, cold and cached, against the raw OpenFGA Check of the same
// question, and the cost the webhook adds to a GET through the core. A
// real OpenFGA (bin/openfga, SQLite, caches on) and a real core
// (bin/meshplane) are started; the webhook runs in the test process.
package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
	"github.com/meshplane/meshplane/operators/fgaclient"
	"github.com/meshplane/meshplane/sdk/testing/framework"
	"github.com/meshplane/meshplane/sdk/testing/openfga"
	"github.com/meshplane/meshplane/webhook/internal/clusters"
	"github.com/meshplane/meshplane/webhook/internal/decision"
	"github.com/meshplane/meshplane/webhook/internal/fgacheck"
	"github.com/meshplane/meshplane/webhook/internal/mapping"
	"github.com/meshplane/meshplane/webhook/internal/metrics"
	"github.com/meshplane/meshplane/webhook/internal/resources"
	"github.com/meshplane/meshplane/webhook/internal/server"
)

const origin = "benchorg"

type stats struct {
	n           int
	wall        time.Duration
	p50, p99    time.Duration
	perSecond   float64
	concurrency int
}

func (s stats) String() string {
	return fmt.Sprintf("%.0f/s, p50 %s, p99 %s", s.perSecond, round(s.p50), round(s.p99))
}

func round(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%d µs", d.Microseconds())
	}
	return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000)
}

// measure runs do(i) for i in [0, n) on c workers.
func measure(n, c int, do func(i int) error) (stats, error) {
	lat := make([]time.Duration, n)
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	next := make(chan int)
	start := time.Now()
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				t := time.Now()
				if err := do(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
				lat[i] = time.Since(t)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	wall := time.Since(start)
	slices.Sort(lat)
	return stats{n: n, wall: wall, p50: lat[n/2], p99: lat[n*99/100], perSecond: float64(n) / wall.Seconds(), concurrency: c}, first
}

// hook is an in-process webhook over HTTPS.
type hook struct {
	srv    *httptest.Server
	client *http.Client
}

func newHook(t *testing.T, reg *clusters.Registry, fgaClient *fgacheck.Client, cacheTTL time.Duration) *hook {
	m := metrics.New(func() float64 { return 0 })
	d := &decision.Decider{Clusters: reg, FGA: fgaClient, Metrics: m, Resources: &resources.Resolver{}, CacheTTL: cacheTTL,
		NewClusterGrace: time.Minute, RetryAfter: time.Second}
	d.Init(2 * time.Second)
	srv := httptest.NewTLSServer(server.AuthzHandler(d, m, logr.Discard()))
	t.Cleanup(srv.Close)
	client := srv.Client()
	client.Transport.(*http.Transport).MaxIdleConnsPerHost = 64
	return &hook{srv: srv, client: client}
}

func (h *hook) review(cluster, user, name string) (bool, error) {
	sar := authorizationv1.SubjectAccessReview{}
	sar.APIVersion, sar.Kind = "authorization.k8s.io/v1", "SubjectAccessReview"
	sar.Spec = authorizationv1.SubjectAccessReviewSpec{User: user, Groups: []string{"system:authenticated"},
		Extra:              map[string]authorizationv1.ExtraValue{"authorization.kcp.io/cluster-name": {cluster}},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Version: "v1", Resource: "configmaps", Namespace: "apps", Name: name}}
	body, _ := json.Marshal(&sar)
	resp, err := h.client.Post(h.srv.URL, "application/json", bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	var out authorizationv1.SubjectAccessReview
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return false, err
	}
	return out.Status.Allowed, nil
}

func TestBench(t *testing.T) {
	if os.Getenv("REBAC_BENCH_RUN") == "" {
		t.Skip("set REBAC_BENCH_RUN=1 (make bench does)")
	}
	ctx := context.Background()
	n := 2000
	fgaSrv := openfga.Start(t, openfga.Options{})
	admin, err := fgaclient.New(fgaSrv.URL)
	if err != nil {
		t.Fatal(err)
	}
	store, err := admin.CreateStore(ctx, "bench")
	if err != nil {
		t.Fatal(err)
	}
	model, err := fga.Compose([]fga.Module{{Name: fga.CoreModuleName, Contents: fga.CoreModule}})
	if err != nil {
		t.Fatal(err)
	}
	modelID, _, err := admin.WriteModelIfChanged(ctx, store, "", model)
	if err != nil {
		t.Fatal(err)
	}
	// bob is a member of the organization acme; team is its account.
	tuples := append(fga.AccountTuples(origin, "acme", "alice", "", ""), fga.AccountTuples("acmecluster", "team", "alice", origin, "acme")...)
	tuples = append(tuples, v1alpha1.Tuple{Object: fga.AccountObject(origin, "acme"), Relation: fga.RelationMember, User: fga.UserID("bob")})
	if err := admin.Write(ctx, store, tuples, nil); err != nil {
		t.Fatal(err)
	}

	// The core, registering the webhook (no core-side cache: every
	// request asks it).
	reg := clusters.NewRegistry()
	reg.MarkSynced()
	fgaClient, err := fgacheck.New(fgaSrv.URL, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	uncached := newHook(t, reg, fgaClient, 0)
	cached := newHook(t, reg, fgaClient, time.Hour)
	dir := t.TempDir()
	kubeconfig := writeKubeconfig(t, dir, uncached.srv)
	core := framework.StartServer(t, framework.WithExtraArgs("--authorization-webhook-config-file="+kubeconfig,
		"--authorization-webhook-version=v1", "--authorization-webhook-cache-authorized-ttl=0s", "--authorization-webhook-cache-unauthorized-ttl=0s"))
	cluster, admink := core.NewCluster(t, "bench")
	reg.Set(clusters.Info{Cluster: cluster, Path: "root:orgs:acme:team", Org: "acme", Account: "team", OriginCluster: "acmecluster", StoreID: store})

	q := func(name string) mapping.Query {
		q, err := mapping.ForResource(mapping.Workspace{Cluster: cluster, Account: fga.AccountObject("acmecluster", "team")}, "bob",
			&authorizationv1.ResourceAttributes{Verb: "get", Resource: "configmaps", Namespace: "apps", Name: name},
			fga.Resource{Plural: "configmaps", Singular: "configmap", Namespaced: true})
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	rawCheck := func(name string) error {
		ok, err := fgaClient.Check(ctx, store, modelID, q(name), false)
		if err == nil && !ok {
			err = fmt.Errorf("raw check of %s: not allowed", name)
		}
		return err
	}
	review := func(h *hook, name string) error {
		ok, err := h.review(cluster, "bob", name)
		if err == nil && !ok {
			err = fmt.Errorf("review of %s: not allowed", name)
		}
		return err
	}
	// Warm connections and the model id.
	for i := range 20 {
		_ = rawCheck(fmt.Sprintf("warm-%d", i))
		_ = review(uncached, fmt.Sprintf("warm-%d", i))
		_ = review(cached, fmt.Sprintf("warm-%d", i))
	}

	var rows [][2]string
	add := func(what string, s stats, err error) {
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		rows = append(rows, [2]string{what, s.String()})
		t.Logf("%-70s %s", what, s)
	}
	for _, c := range []int{1, 8} {
		// Cold: every question new to OpenFGA's caches and the webhook's.
		s, err := measure(n, c, func(i int) error { return rawCheck(fmt.Sprintf("raw-cold-%d-%d", c, i)) })
		add(fmt.Sprintf("raw OpenFGA Check, cold (new object each), %d client(s)", c), s, err)
		s, err = measure(n, c, func(i int) error { return review(uncached, fmt.Sprintf("wh-cold-%d-%d", c, i)) })
		add(fmt.Sprintf("webhook review, cold (new object each), %d client(s)", c), s, err)
		// Repeated questions: OpenFGA's check cache answers; the webhook
		// without and with its own decision cache.
		s, err = measure(n, c, func(i int) error { return rawCheck(fmt.Sprintf("hot-%d", i%50)) })
		add(fmt.Sprintf("raw OpenFGA Check, repeated (50 objects), %d client(s)", c), s, err)
		s, err = measure(n, c, func(i int) error { return review(uncached, fmt.Sprintf("hot-%d", i%50)) })
		add(fmt.Sprintf("webhook review, repeated, decision cache off, %d client(s)", c), s, err)
		s, err = measure(n, c, func(i int) error { return review(cached, fmt.Sprintf("hot-%d", i%50)) })
		add(fmt.Sprintf("webhook review, cached (decision cache hit), %d client(s)", c), s, err)
	}

	// A GET through the core: alice by RBAC (cluster admin in this
	// cluster via system:masters' kubeconfig is not comparable, so a
	// RoleBinding) vs bob by the webhook.
	admink.Run(t, "create", "namespace", "apps")
	admink.Run(t, "create", "configmap", "cfg", "-n", "apps", "--from-literal=k=v")
	admink.Run(t, "create", "role", "reader", "-n", "apps", "--verb=get", "--resource=configmaps")
	admink.Run(t, "create", "rolebinding", "alice-reader", "-n", "apps", "--role=reader", "--user=alice")
	hc := core.HTTPClient(t)
	hc.Transport.(*http.Transport).MaxIdleConnsPerHost = 64
	get := func(user string) func(int) error {
		token := core.UserToken(t, user)
		url := core.ClusterURL(cluster) + "/api/v1/namespaces/apps/configmaps/cfg"
		return func(int) error {
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := hc.Do(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				return fmt.Errorf("GET as %s: %d", user, resp.StatusCode)
			}
			return nil
		}
	}
	for range 20 {
		_ = get("alice")(0)
		_ = get("bob")(0)
	}
	for _, c := range []int{1, 8} {
		s, err := measure(n/2, c, get("alice"))
		add(fmt.Sprintf("GET configmap through the core, allowed by RBAC, %d client(s)", c), s, err)
		s, err = measure(n/2, c, get("bob"))
		add(fmt.Sprintf("GET configmap through the core, allowed by the webhook (uncached), %d client(s)", c), s, err)
	}

	var b strings.Builder
	b.WriteString("| measurement | rate, p50, p99 |\n| --- | --- |\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s |\n", r[0], r[1])
	}
	fmt.Println(b.String())
	if out := os.Getenv("REBAC_BENCH_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// writeKubeconfig writes the core's webhook kubeconfig for srv.
func writeKubeconfig(t *testing.T, dir string, srv *httptest.Server) string {
	ca := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "webhook.kubeconfig")
	cfg := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: w\n  cluster: {server: %q, certificate-authority: %q}\nusers:\n- name: core\n  user: {}\ncontexts:\n- name: w\n  context: {cluster: w, user: core}\ncurrent-context: w\n",
		srv.URL+"/authz", ca)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
