package e2e

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

var (
	accountsGVR        = schema.GroupVersionResource{Group: "core.platform-mesh.io", Version: "v1alpha1", Resource: "accounts"}
	roleAssignmentsGVR = schema.GroupVersionResource{Group: "core.platform-mesh.io", Version: "v1alpha1", Resource: "roleassignments"}
)

// restConfig is a kubeconfig context's config for a workspace.
func (p *platform) restConfig(t *testing.T, context, workspace string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: p.kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: context, ClusterInfo: clientcmdapi.Cluster{Server: p.env["CORE_URL"] + "/clusters/" + workspace}}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	return cfg
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// pct is the nearest-rank percentile (p99 of 20 samples is the largest).
func pct(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(i, 0)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// TestAuthzBench (make bench, AUTHZ_BENCH_RUN=1; issue 23): on make run's
// platform (webhook and core caches on, as shipped) it measures
//   - grant: a RoleAssignment making bob a member created (the create
//     call returned) until bob's first allowed list of configmaps;
//   - revoke: its deletion (the delete call returned) until his first
//     refused list; AUTHZ_BENCH_ROUNDS (default 20) of each, bob polling
//     every 20 ms;
//   - Check latency through the core with AUTHZ_BENCH_ORGS (default 100)
//     organizations, bob a member of each: GETs of configmaps (each a new
//     object, so neither the core's nor the webhook's cache answers) and of
//     the same few (caches warm), round robin over the organizations,
//     AUTHZ_BENCH_GETS (default 1000) each, one client; and the admin's
//     GETs (RBAC) for comparison.
//
// The figures go to AUTHZ_BENCH_OUT as Markdown.
func TestAuthzBench(t *testing.T) {
	if os.Getenv("AUTHZ_BENCH_RUN") != "1" {
		t.Skip("a benchmark: AUTHZ_BENCH_RUN=1 runs it (make bench)")
	}
	rounds, nOrgs, gets := envInt("AUTHZ_BENCH_ROUNDS", 20), envInt("AUTHZ_BENCH_ORGS", 100), envInt("AUTHZ_BENCH_GETS", 1000)
	p := startPlatform(t)
	ctx := context.Background()
	const first = "benchorg"
	org := "root:orgs:" + first
	p.must(t, "alice", "root:orgs", account(first, "org"), "create", "-f", "-")
	p.must(t, "alice", "root:orgs", "", "wait", "--for=condition=Ready", "account/"+first, "--timeout=120s")
	p.eventually(t, "alice to create a namespace in "+first, true, "alice", org, "create", "namespace", "apps")
	bob := p.clientset(t, "bob", org)
	aliceRA, err := dynamic.NewForConfig(p.restConfig(t, "alice", org))
	if err != nil {
		t.Fatal(err)
	}
	ra := func(name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "core.platform-mesh.io/v1alpha1", "kind": "RoleAssignment", "metadata": map[string]any{"name": name},
			"spec": map[string]any{"subject": map[string]any{"kind": "User", "name": "bob"}, "role": "member"}}}
	}

	// Grant and revoke.
	var grants, revokes []time.Duration
	for i := range rounds {
		name := fmt.Sprintf("bob-%d", i)
		if _, err := aliceRA.Resource(roleAssignmentsGVR).Create(ctx, ra(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		grants = append(grants, latency(t, bob, time.Now(), true, "bob to read once granted"))
		if err := aliceRA.Resource(roleAssignmentsGVR).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		revokes = append(revokes, latency(t, bob, time.Now(), false, "bob to be refused once his grant is deleted"))
		// The next round starts from a settled state: the grant is gone.
		framework.Eventually(t, 60*time.Second, 50*time.Millisecond, "RoleAssignment "+name+" to be gone", func() (bool, string) {
			_, err := aliceRA.Resource(roleAssignmentsGVR).Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
	}
	t.Logf("grants %v", grants)
	t.Logf("revokes %v", revokes)

	// nOrgs organizations, bob a member of each.
	aliceOrgs, err := dynamic.NewForConfig(p.restConfig(t, "alice", "root:orgs"))
	if err != nil {
		t.Fatal(err)
	}
	names := []string{first}
	created := time.Now()
	for i := 1; i < nOrgs; i++ {
		name := fmt.Sprintf("bench-%03d", i)
		names = append(names, name)
		a := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "core.platform-mesh.io/v1alpha1", "kind": "Account",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"type": "org", "displayName": name}}}
		if _, err := aliceOrgs.Resource(accountsGVR).Create(ctx, a, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	adminOrgs, err := dynamic.NewForConfig(p.restConfig(t, "base", "root:orgs"))
	if err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 15*time.Minute, time.Second, fmt.Sprintf("%d organizations to be Ready", nOrgs), func() (bool, string) {
		list, err := adminOrgs.Resource(accountsGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		ready := 0
		for _, a := range list.Items {
			conds, _, _ := unstructured.NestedSlice(a.Object, "status", "conditions")
			for _, c := range conds {
				if m, _ := c.(map[string]any); m["type"] == "Ready" && m["status"] == "True" {
					ready++
				}
			}
		}
		return ready >= nOrgs, fmt.Sprintf("%d Ready", ready)
	})
	orgsReady := time.Since(created)
	bobs := make([]*kubernetes.Clientset, len(names))
	admins := make([]*kubernetes.Clientset, len(names))
	var wg sync.WaitGroup
	errs := make(chan error, len(names))
	for i, name := range names {
		bobs[i] = p.clientset(t, "bob", "root:orgs:"+name)
		admins[i] = p.clientset(t, "base", "root:orgs:"+name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			dc, err := dynamic.NewForConfig(p.restConfig(t, "alice", "root:orgs:"+name))
			if err != nil {
				errs <- err
				return
			}
			deadline := time.Now().Add(5 * time.Minute)
			for {
				_, err = dc.Resource(roleAssignmentsGVR).Create(ctx, ra("bob-member"), metav1.CreateOptions{})
				if err == nil || apierrors.IsAlreadyExists(err) {
					break
				}
				if time.Now().After(deadline) {
					errs <- fmt.Errorf("granting bob in %s: %w", name, err)
					return
				}
				time.Sleep(500 * time.Millisecond)
			}
			for {
				_, err := bobs[i].CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
				if err == nil || apierrors.IsNotFound(err) {
					return
				}
				if time.Now().After(deadline) {
					errs <- fmt.Errorf("bob reading in %s: %w", name, err)
					return
				}
				time.Sleep(200 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// get GETs configmap name(i) in organization i mod nOrgs; a 404 is an
	// allowed request (authorization comes first).
	measure := func(cs []*kubernetes.Clientset, name func(i int) string) []time.Duration {
		lat := make([]time.Duration, gets)
		for i := range gets {
			start := time.Now()
			_, err := cs[i%len(cs)].CoreV1().ConfigMaps(corev1.NamespaceDefault).Get(ctx, name(i), metav1.GetOptions{})
			lat[i] = time.Since(start)
			if err != nil && !apierrors.IsNotFound(err) {
				t.Fatalf("GET %s in %s: %v", name(i), names[i%len(cs)], err)
			}
		}
		return lat
	}
	distinct := func(i int) string { return fmt.Sprintf("cm-%d", i) }
	same := func(int) string { return "cfg" }
	coldBob := measure(bobs, distinct)
	warmBob := measure(bobs, same)
	coldAdmin := measure(admins, func(i int) string { return fmt.Sprintf("admin-%d", i) })

	load, _ := os.ReadFile("/proc/loadavg")
	var b strings.Builder
	fmt.Fprintf(&b, "| measurement (%s, load average %s) | p50 | p99 | max |\n| --- | --- | --- | --- |\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), strings.Join(strings.Fields(string(load))[:3], " "))
	row := func(what string, ds []time.Duration) {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", what, ms(pct(ds, 0.5)), ms(pct(ds, 0.99)), ms(pct(ds, 1)))
	}
	row(fmt.Sprintf("grant: RoleAssignment created → bob's first allowed list (%d)", len(grants)), grants)
	row(fmt.Sprintf("revoke: RoleAssignment deleted → bob's first refused list (%d)", len(revokes)), revokes)
	row(fmt.Sprintf("member's GET through the webhook, new object each, %d orgs (%d)", len(names), gets), coldBob)
	row(fmt.Sprintf("member's GET through the webhook, same object per org, %d orgs (%d)", len(names), gets), warmBob)
	row(fmt.Sprintf("admin's GET (RBAC, no webhook), new object each, %d orgs (%d)", len(names), gets), coldAdmin)
	fmt.Fprintf(&b, "\n%d organizations Ready %s after their creation (%d at once).\n", nOrgs-1, orgsReady.Round(time.Second), nOrgs-1)
	t.Log("\n" + b.String())
	if out := os.Getenv("AUTHZ_BENCH_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
