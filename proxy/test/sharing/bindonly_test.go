package sharing

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

var gadgetsCRD = framework.SchemalessCRD("example.org", "gadgets", "Gadget")

// deepHeader is kcp's header asking a shard for a deep
// SubjectAccessReview (the cluster's RBAC only).
const deepHeader = "X-Kcp-Internal-Deep-SubjectAccessReview"

// testBindOnly: as on one shard (core/test/e2e/fidelity
// TestBindNeedsOnlyBind), bob with verb bind on the export in the
// provider workspace on root, and nothing else there, binds it from his
// workspace on shard b; without it he is refused. Shard b asks root a
// deep review, which only shard admins may ask.
func testBindOnly(t *testing.T, sh *framework.Shards) {
	ps := sh.Via
	org := framework.CreatePinnedWorkspace(t, ps, "root", framework.UniqueName("bindonly"), "root")
	provider := framework.CreatePinnedWorkspace(t, ps, org.Path, "provider", "root")
	consumer := framework.CreatePinnedWorkspace(t, ps, org.Path, "consumer", "b")
	ps.ExportCRD(t, provider, gadgetsCRD, "example.org")
	ps.KubectlFor(consumer.Path).Run(t, "create", "clusterrolebinding", "bob-admin", "--clusterrole=cluster-admin", "--user=bob")
	binding := fmt.Sprintf("apiVersion: apis.kcp.io/v1alpha2\nkind: APIBinding\nmetadata:\n  name: gadgets\nspec:\n  reference:\n    export:\n      path: %s\n      name: example.org\n", provider.Path)
	bob := asUser(t, sh, "bob", consumer.Path)

	out, errOut, err := bob.RunStdinErr(t, binding, "create", "-f", "-")
	framework.RequireFails(t, out, errOut, err, "bob binding without bind on the export", "may not bind")

	pk := ps.KubectlFor(provider.Path)
	pk.RunStdin(t, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: bind-gadgets}\n"+
		"rules: [{apiGroups: [apis.kcp.io], resources: [apiexports], resourceNames: [example.org], verbs: [bind]}]\n", "apply", "-f", "-")
	pk.Run(t, "create", "clusterrolebinding", "bob-binds", "--clusterrole=bind-gadgets", "--user=bob")
	if _, _, err := asUser(t, sh, "bob", provider.Path).RunErr(t, "get", "configmaps", "-A"); err == nil {
		t.Fatalf("bob must have no access to the provider workspace for this test")
	}
	// The refusal above may be cached on b for a few seconds.
	framework.Eventually(t, 30*time.Second, 500*time.Millisecond, "bob to bind with only bind in the provider", func() (bool, string) {
		out, errOut, err := bob.RunStdinErr(t, binding, "create", "-f", "-")
		return err == nil, out + errOut
	})
	ps.WaitBound(t, consumer, "gadgets", provider)

	// The deep review is the shard admins': from anybody else (alice, admin
	// of the provider workspace) the header means nothing and root's whole
	// chain answers, which refuses bob for lack of access to the workspace.
	pk.Run(t, "create", "clusterrolebinding", "alice-admin", "--clusterrole=cluster-admin", "--user=alice")
	admin := sh.Root.RESTConfig(t, provider.Cluster)
	alice := rest.AnonymousClientConfig(admin)
	alice.BearerToken = sh.Root.UserToken(t, "alice")
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: "bob",
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "bind", Group: "apis.kcp.io", Resource: "apiexports", Name: "example.org"}}}
	ask := func(cfg *rest.Config, deep bool) *authorizationv1.SubjectAccessReview {
		t.Helper()
		cfg = rest.CopyConfig(cfg)
		if deep {
			cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return headerRT{next: rt} })
		}
		c, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var got *authorizationv1.SubjectAccessReview
		framework.Eventually(t, 30*time.Second, 500*time.Millisecond, "a SubjectAccessReview in the provider", func() (bool, string) {
			got, err = c.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), sar.DeepCopy(), metav1.CreateOptions{})
			return err == nil, fmt.Sprint(err)
		})
		return got
	}
	if got := ask(admin, true); !got.Status.Allowed {
		t.Fatalf("a deep review by the shard admin: bob may bind, got %+v", got.Status)
	}
	if got := ask(admin, false); got.Status.Allowed {
		t.Fatalf("a plain review: bob has no access to the provider workspace, got %+v", got.Status)
	}
	if got := ask(alice, true); got.Status.Allowed {
		t.Fatalf("a deep review by alice must be a plain one, got %+v", got.Status)
	}
}

// headerRT asks for deep reviews.
type headerRT struct{ next http.RoundTripper }

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(deepHeader, "true")
	return h.next.RoundTrip(r)
}
