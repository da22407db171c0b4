package bench

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

var widgetsCRD = framework.SchemalessCRD("example.com", "widgets", "Widget")

// TestSharingBench measures API sharing across shards (a root shard and
// shard b behind the proxy, an export on root): APIBinding created ->
// Bound on the export's shard and on the other one, and, for the first
// binding on b, Bound -> b's URL in the export's endpoint slice; bindings
// on b by a user with only bind on the export (a deep review on root,
// cached), and what one such review costs. Each binding is polled every
// 2 ms on its shard.
//
//	PROXY_BENCH_RUN=1 go test -run TestSharingBench -v ./proxy/test/bench/
//
// (PROXY_BENCH_BINDINGS sizes it; PROXY_BENCH_SHARING_OUT names a file for
// the Markdown table).
func TestSharingBench(t *testing.T) {
	if os.Getenv("PROXY_BENCH_RUN") == "" {
		t.Skip("set PROXY_BENCH_RUN=1 (make bench does)")
	}
	n := envInt("PROXY_BENCH_BINDINGS", 10)
	sh := framework.StartShards(t)
	ps := sh.Via
	org := framework.CreatePinnedWorkspace(t, ps, "root", "sharebench", "root")
	provider := framework.CreatePinnedWorkspace(t, ps, org.Path, "provider", "root")
	ps.ExportCRD(t, provider, widgetsCRD, "example.com")
	bURL := strings.TrimSpace(sh.Root.KubectlFor("root").Run(t, "get", "shard", "b", "-o", "jsonpath={.spec.virtualWorkspaceURL}")) +
		"/services/apiexport/" + provider.Cluster + "/example.com"

	// alice may only bind the export in the provider: her bindings on b
	// are checked by a deep review on root (cached on b).
	pk := ps.KubectlFor(provider.Path)
	pk.RunStdin(t, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: bind-widgets}\n"+
		"rules: [{apiGroups: [apis.kcp.io], resources: [apiexports], resourceNames: [example.com], verbs: [bind]}]\n", "apply", "-f", "-")
	pk.Run(t, "create", "clusterrolebinding", "alice-binds", "--clusterrole=bind-widgets", "--user=alice")

	// bindLatency binds in a new workspace on shard as the admin, or as
	// alice when user is set.
	bindLatency := func(shard string, s *framework.Server, i int, user string, onBound func()) time.Duration {
		c := framework.CreatePinnedWorkspace(t, ps, org.Path, fmt.Sprintf("c-%s%s-%d", shard, user, i), shard)
		cfg := s.RESTConfig(t, c.Cluster)
		if user != "" {
			ps.KubectlFor(c.Path).Run(t, "create", "clusterrolebinding", "user-admin", "--clusterrole=cluster-admin", "--user="+user)
			cfg = rest.AnonymousClientConfig(cfg)
			cfg.BearerToken = s.UserToken(t, user)
		}
		dyn := framework.DynamicFor(t, cfg)
		if user != "" {
			// Until alice's admin binding is seen (not timed).
			framework.Eventually(t, 30*time.Second, 10*time.Millisecond, "alice to list bindings in "+c.Path, func() (bool, string) {
				_, err := dyn.Resource(framework.APIBindingGVR).List(framework.CallContext(t), metav1.ListOptions{})
				return err == nil, fmt.Sprint(err)
			})
		}
		start := time.Now()
		if _, err := dyn.Resource(framework.APIBindingGVR).Create(framework.CallContext(t),
			framework.APIBinding("widgets", provider.Path, "example.com", nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for {
			got, err := dyn.Resource(framework.APIBindingGVR).Get(framework.CallContext(t), "widgets", metav1.GetOptions{})
			if err == nil {
				if phase, _, _ := unstructured.NestedString(got.Object, "status", "phase"); phase == "Bound" {
					d := time.Since(start)
					if onBound != nil {
						onBound()
					}
					return d
				}
			}
			if time.Since(start) > time.Minute {
				t.Fatalf("APIBinding in %s not Bound within a minute", c.Path)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	var sameShard, otherShard, otherShardUser []time.Duration
	var sliceLag time.Duration
	slices := sh.Root.Dynamic(t, provider.Cluster).Resource(framework.EndpointSliceGVR)
	for i := 0; i < n; i++ {
		sameShard = append(sameShard, bindLatency("root", sh.Root, i, "", nil))
		var first func()
		if i == 0 {
			first = func() {
				start := time.Now()
				for {
					got, err := slices.Get(framework.CallContext(t), "example.com", metav1.GetOptions{})
					if err == nil && strings.Contains(framework.Compact(got.Object["status"]), bURL) {
						sliceLag = time.Since(start)
						return
					}
					if time.Since(start) > time.Minute {
						t.Fatal("b's URL not in the slice within a minute")
					}
					time.Sleep(2 * time.Millisecond)
				}
			}
		}
		otherShard = append(otherShard, bindLatency("b", sh.B, i, "", first))
		otherShardUser = append(otherShardUser, bindLatency("b", sh.B, i, "alice", nil))
	}
	// What a review on root costs b when its answer is not cached: a deep
	// SubjectAccessReview on root, sent with the admin credentials.
	deep := rest.CopyConfig(sh.Root.RESTConfig(t, provider.Cluster))
	deep.Wrap(func(rt http.RoundTripper) http.RoundTripper { return deepRT{next: rt} })
	reviews, err := kubernetes.NewForConfig(deep)
	if err != nil {
		t.Fatal(err)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: "alice",
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "bind", Group: "apis.kcp.io", Resource: "apiexports", Name: "example.com"}}}
	var review []time.Duration
	for i := 0; i < 10*n; i++ {
		start := time.Now()
		got, err := reviews.AuthorizationV1().SubjectAccessReviews().Create(framework.CallContext(t), sar.DeepCopy(), metav1.CreateOptions{})
		if err != nil || !got.Status.Allowed {
			t.Fatalf("deep review of alice's bind on root: %v %+v", err, got)
		}
		review = append(review, time.Since(start))
	}
	revocation := revocationLatency(t, sh, ps, org, provider, 5)
	var b strings.Builder
	fmt.Fprintf(&b, "| figure (%d bindings each) | p50 | max |\n| --- | --- | --- |\n", n)
	row := func(what string, d []time.Duration) {
		fmt.Fprintf(&b, "| %s | %.1f ms | %.1f ms |\n", what, ms(percentile(d, 0.5)), ms(percentile(d, 1)))
	}
	row("APIBinding created -> Bound, consumer on the export's shard", sameShard)
	row("APIBinding created -> Bound, consumer on the other shard", otherShard)
	row("APIBinding created -> Bound, consumer on the other shard, by a user with only bind on root (reviewed on root, answer kept 0.6 s)", otherShardUser)
	row(fmt.Sprintf("one deep SubjectAccessReview on root (what a cache miss costs; %d)", len(review)), review)
	fmt.Fprintf(&b, "| first binding on b Bound -> b's URL in the endpoint slice (on root) | %.1f ms | |\n", ms(sliceLag))
	row(fmt.Sprintf("bind revoked on root -> alice's next binding on b refused (%d revocations, a dry-run create every 5 ms)", len(revocation)), revocation)
	t.Log("\n" + b.String())
	if out := os.Getenv("PROXY_BENCH_SHARING_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// revocationLatency measures, rounds times, how long alice's bind on the
// export keeps working on shard b once revoked on root: the grant is made,
// a dry-run binding on b is allowed (b keeps root's answer), the
// ClusterRoleBinding is deleted on root, and dry-run bindings on b every
// 5 ms until one is refused.
func revocationLatency(t *testing.T, sh *framework.Shards, ps *framework.Server, org, provider framework.Workspace, rounds int) []time.Duration {
	t.Helper()
	c := framework.CreatePinnedWorkspace(t, ps, org.Path, "c-b-revoke", "b")
	ps.KubectlFor(c.Path).Run(t, "create", "clusterrolebinding", "alice-admin", "--clusterrole=cluster-admin", "--user=alice")
	cfg := rest.AnonymousClientConfig(sh.B.RESTConfig(t, c.Cluster))
	cfg.BearerToken = sh.B.UserToken(t, "alice")
	bindings := framework.DynamicFor(t, cfg).Resource(framework.APIBindingGVR)
	kube, err := kubernetes.NewForConfig(sh.Root.RESTConfig(t, provider.Cluster))
	if err != nil {
		t.Fatal(err)
	}
	grants := kube.RbacV1().ClusterRoleBindings()
	bind := func() error {
		_, err := bindings.Create(framework.CallContext(t), framework.APIBinding("revoked", provider.Path, "example.com", nil),
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	var out []time.Duration
	for i := 0; i < rounds; i++ {
		if _, err := grants.Get(framework.CallContext(t), "alice-binds", metav1.GetOptions{}); err != nil {
			crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-binds"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "bind-widgets"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}}
			if _, err := grants.Create(framework.CallContext(t), crb, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		framework.Eventually(t, 30*time.Second, 20*time.Millisecond, "alice to bind on b with bind granted on root", func() (bool, string) {
			err := bind()
			return err == nil, fmt.Sprint(err)
		})
		if err := grants.Delete(framework.CallContext(t), "alice-binds", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		revoked := time.Now()
		for {
			err := bind()
			if apierrors.IsForbidden(err) {
				out = append(out, time.Since(revoked))
				break
			}
			if time.Since(revoked) > 30*time.Second {
				t.Fatalf("alice still binds on b 30 s after the revocation on root: %v", err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return out
}

// deepRT asks for deep reviews (kcp's header).
type deepRT struct{ next http.RoundTripper }

func (d deepRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Kcp-Internal-Deep-SubjectAccessReview", "true")
	return d.next.RoundTrip(r)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
