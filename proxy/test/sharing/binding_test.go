package sharing

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/kcp-dev/multicluster-provider/apiexport"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmanager "sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

var widgetGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}

// reconciledAnnotation is what the test's controller writes on a Widget:
// the logical cluster it reconciled it in.
const reconciledAnnotation = "e2e.meshplane.io/reconciled-in"

// sliceURLs reads the endpoint URLs of a slice.
func sliceURLs(t *testing.T, sh *framework.Shards, provider framework.Workspace, slice string) []string {
	t.Helper()
	out := sh.Via.KubectlFor(provider.Path).Run(t, "get", "apiexportendpointslice", slice, "-o", `jsonpath={range .status.endpoints[*]}{.url}{"\n"}{end}`)
	urls := strings.Fields(out)
	slices.Sort(urls)
	return urls
}

// testAPIBinding: an export on the root shard, bound in a workspace on
// each shard (on b through a cross-shard bind check); the slice lists
// both shards' URLs, and a multicluster-runtime controller on the slice
// reconciles Widgets in both consumers.
func testAPIBinding(t *testing.T, sh *framework.Shards) {
	ps := sh.Via
	org := framework.CreatePinnedWorkspace(t, ps, "root", framework.UniqueName("share"), "root")
	provider := framework.CreatePinnedWorkspace(t, ps, org.Path, "provider", "root")
	onRoot := framework.CreatePinnedWorkspace(t, ps, org.Path, "consumer-root", "root")
	onB := framework.CreatePinnedWorkspace(t, ps, org.Path, "consumer-b", "b")
	identity := ps.ExportCRD(t, provider, widgetsCRD, "example.com")

	// alice may bind (and read the content of) the export; bob is admin
	// of the consumer on b only.
	ps.KubectlFor(provider.Path).Run(t, "create", "clusterrolebinding", "alice-admin", "--clusterrole=cluster-admin", "--user=alice")
	ps.KubectlFor(onB.Path).Run(t, "create", "clusterrolebinding", "alice-admin", "--clusterrole=cluster-admin", "--user=alice")
	ps.KubectlFor(onB.Path).Run(t, "create", "clusterrolebinding", "bob-admin", "--clusterrole=cluster-admin", "--user=bob")
	binding := fmt.Sprintf("apiVersion: apis.kcp.io/v1alpha2\nkind: APIBinding\nmetadata:\n  name: widgets\nspec:\n  reference:\n    export:\n      path: %s\n      name: example.com\n", provider.Path)

	// Shard b asks the root shard whether bob may bind there: he may not.
	_, errOut, err := asUser(t, sh, "bob", onB.Path).RunStdinErr(t, binding, "create", "-f", "-")
	framework.RequireFails(t, "", errOut, err, "bob binding an export of the root shard from shard b", "may not bind")

	// alice may: the binding on b resolves the export on root, and b serves
	// Widgets under the export's identity.
	framework.Eventually(t, 30*time.Second, 500*time.Millisecond, "alice to bind from shard b", func() (bool, string) {
		out, errOut, err := asUser(t, sh, "alice", onB.Path).RunStdinErr(t, binding, "create", "-f", "-")
		return err == nil, out + errOut
	})
	bound := ps.WaitBound(t, onB, "widgets", provider)
	res, _, _ := unstructured.NestedSlice(bound.Object, "status", "boundResources")
	hash, _, _ := unstructured.NestedString(res[0].(map[string]any), "schema", "identityHash")
	framework.RequireEqual(t, hash, identity, "identity of the bound resource on shard b")
	ps.Bind(t, onRoot, "widgets", provider, "example.com", nil)

	widget := func(name string) string {
		return "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: " + name + "\n  namespace: default\nspec: {size: 1}\n"
	}
	framework.Eventually(t, 30*time.Second, 500*time.Millisecond, "alice to create a Widget on shard b", func() (bool, string) {
		out, errOut, err := asUser(t, sh, "alice", onB.Path).RunStdinErr(t, widget("w-b"), "create", "-f", "-")
		return err == nil, out + errOut
	})
	ps.KubectlFor(onRoot.Path).RunStdin(t, widget("w-root"), "create", "-f", "-")
	// Stored on b under the export's identity.
	r := sh.B.RequestURL(t, sh.B.AdminToken(t), "GET", sh.B.BaseURL+"/clusters/*/apis/example.com/v1/widgets:"+identity, "", nil)
	framework.RequireCode(t, r, "Widgets of the export's identity on shard b", 200)
	framework.RequireContains(t, r.String(), `"w-b"`, "Widgets of the export's identity on shard b")

	// The slice lists both shards' virtual workspace URLs.
	want := []string{vwURL(t, sh, "root") + "/services/apiexport/" + provider.Cluster + "/example.com",
		vwURL(t, sh, "b") + "/services/apiexport/" + provider.Cluster + "/example.com"}
	slices.Sort(want)
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "the slice to list the URL of each shard", func() (bool, string) {
		got := sliceURLs(t, sh, provider, "example.com")
		return slices.Equal(got, want), fmt.Sprintf("%v, want %v", got, want)
	})
	// b's URL serves b's consumers to alice (b asks root whether she may
	// read the export's content).
	bURL := vwURL(t, sh, "b") + "/services/apiexport/" + provider.Cluster + "/example.com"
	framework.Eventually(t, 30*time.Second, 500*time.Millisecond, "alice to list Widgets through shard b's URL", func() (bool, string) {
		r := sh.B.RequestURL(t, sh.Root.UserToken(t, "alice"), "GET", bURL+"/clusters/*/apis/example.com/v1/widgets", "", nil)
		return r.Code == 200 && strings.Contains(r.String(), `"w-b"`) && !strings.Contains(r.String(), `"w-root"`), r.String()
	})
	r = sh.B.RequestURL(t, sh.Root.UserToken(t, "bob"), "GET", bURL+"/clusters/*/apis/example.com/v1/widgets", "", nil)
	framework.RequireCode(t, r, "bob listing Widgets through shard b's URL", 403)

	// A ServiceAccount of the provider workspace (on root) reads b's
	// consumers through b's URL: b checks the token (the shards share the
	// signing key) against the ServiceAccount on root.
	inProvider := ps.KubectlFor(provider.Path)
	inProvider.Run(t, "create", "serviceaccount", "watcher", "-n", "default")
	inProvider.Run(t, "create", "clusterrolebinding", "watcher-admin", "--clusterrole=cluster-admin", "--serviceaccount=default:watcher")
	saToken := strings.TrimSpace(inProvider.Run(t, "create", "token", "watcher", "-n", "default"))
	framework.Eventually(t, 30*time.Second, 500*time.Millisecond, "the provider's ServiceAccount to list Widgets through shard b's URL", func() (bool, string) {
		r := sh.B.RequestURL(t, saToken, "GET", bURL+"/clusters/*/apis/example.com/v1/widgets", "", nil)
		return r.Code == 200 && strings.Contains(r.String(), `"w-b"`), r.String()
	})
	// Not a key to b's own workspaces.
	r = sh.B.RequestURL(t, saToken, "GET", sh.B.BaseURL+"/clusters/"+onB.Cluster+"/apis/example.com/v1/namespaces/default/widgets", "", nil)
	framework.RequireCode(t, r, "the provider's ServiceAccount straight in the consumer on b", 401, 403)

	// A multicluster-runtime controller with kcp's apiexport provider
	// follows both URLs and reconciles the Widgets of both consumers.
	cfg := &rest.Config{Host: sh.Proxy.URL + "/clusters/" + provider.Path, BearerToken: sh.Root.UserToken(t, "alice"),
		TLSClientConfig: rest.TLSClientConfig{CAFile: caBundle(t, sh)}}
	runController(t, cfg)
	for _, c := range []framework.Workspace{onB, onRoot} {
		k := ps.KubectlFor(c.Path)
		name := map[string]string{onB.Path: "w-b", onRoot.Path: "w-root"}[c.Path]
		framework.Eventually(t, time.Minute, 250*time.Millisecond, "the controller to reconcile "+name+" in "+c.Path, func() (bool, string) {
			out := k.Run(t, "get", "widget", name, "-n", "default", "-o", `jsonpath={.metadata.annotations.e2e\.meshplane\.io/reconciled-in}`)
			return out == c.Cluster, out
		})
	}

	// Unbound on b, the slice lists the root shard's URL only.
	ps.KubectlFor(onB.Path).Run(t, "delete", "apibinding", "widgets", "--wait=false")
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "b's URL to leave the slice", func() (bool, string) {
		got := sliceURLs(t, sh, provider, "example.com")
		return len(got) == 1 && strings.HasPrefix(got[0], vwURL(t, sh, "root")+"/"), fmt.Sprint(got)
	})
}

// runController starts a multicluster manager on the export's slice with
// kcp's apiexport provider and a controller that annotates each Widget
// with its cluster; it stops when the test ends.
func runController(t *testing.T, cfg *rest.Config) {
	t.Helper()
	ctrl.SetLogger(logr.Discard())
	scheme := runtime.NewScheme()
	if err := apisv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	provider, err := apiexport.New(cfg, "example.com", apiexport.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := mcmanager.New(cfg, provider, ctrlmanager.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(widgetGVK)
	err = mcbuilder.ControllerManagedBy(mgr).Named("e2e-widgets").For(w).
		Complete(mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			cl, err := mgr.GetCluster(ctx, req.ClusterName)
			if err != nil {
				return reconcile.Result{}, err
			}
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(widgetGVK)
			if err := cl.GetClient().Get(ctx, req.NamespacedName, got); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			if got.GetAnnotations()[reconciledAnnotation] == string(req.ClusterName) {
				return reconcile.Result{}, nil
			}
			patch := client.MergeFrom(got.DeepCopy())
			ann := got.GetAnnotations()
			if ann == nil {
				ann = map[string]string{}
			}
			ann[reconciledAnnotation] = string(req.ClusterName)
			got.SetAnnotations(ann)
			return reconcile.Result{}, cl.GetClient().Patch(ctx, got, patch)
		}))
	if err != nil {
		t.Fatal(err)
	}
	start(t, mgr)
}
