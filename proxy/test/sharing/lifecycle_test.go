package sharing

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kcp-dev/multicluster-provider/initializingworkspaces"
	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	"github.com/kcp-dev/sdk/apis/tenancy/initialization"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmanager "sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// testLifecycle: a WorkspaceType with an initializer, on the root shard,
// lists the initializing virtual workspace of each shard; workspaces of
// the type on both shards wait for the initializer, which kcp's
// initializingworkspaces provider runs on every URL of the type.
func testLifecycle(t *testing.T, sh *framework.Shards) {
	ps := sh.Via
	org := framework.CreatePinnedWorkspace(t, ps, "root", framework.UniqueName("life"), "root")
	k := ps.KubectlFor(org.Path)
	k.RunStdin(t, "apiVersion: tenancy.kcp.io/v1alpha1\nkind: WorkspaceType\nmetadata:\n  name: gated\nspec:\n  initializer: true\n", "apply", "-f", "-")
	id := org.Cluster + ":gated"
	want := []string{vwURL(t, sh, "root") + "/services/initializingworkspaces/" + id, vwURL(t, sh, "b") + "/services/initializingworkspaces/" + id}
	slices.Sort(want)
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "the type to list the initializing virtual workspace of each shard", func() (bool, string) {
		out := k.Run(t, "get", "workspacetype", "gated", "-o", `jsonpath={range .status.virtualWorkspaces[*]}{.url}{"\n"}{end}`)
		got := strings.Fields(out)
		slices.Sort(got)
		return slices.Equal(got, want), fmt.Sprintf("%v, want %v", got, want)
	})

	// One workspace of the type on each shard: both wait for the initializer.
	names := map[string]string{"root": "gated-on-root", "b": "gated-on-b"}
	for shard, name := range names {
		k.RunStdin(t, framework.PinnedWorkspace(name, shard, org.Path+":gated"), "apply", "-f", "-")
	}
	for shard, name := range names {
		framework.Eventually(t, time.Minute, 250*time.Millisecond, name+" to wait in Initializing on "+shard, func() (bool, string) {
			out := k.Run(t, "get", "workspace", name, "-o", `jsonpath={.status.phase}|{.metadata.annotations.core\.kcp\.io/shard}`)
			return out == "Initializing|"+shard, out
		})
	}

	// alice may initialize workspaces of the type (b asks root); bob may not.
	k.Run(t, "create", "clusterrolebinding", "alice-admin", "--clusterrole=cluster-admin", "--user=alice")
	bVW := vwURL(t, sh, "b") + "/services/initializingworkspaces/" + id + "/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters"
	r := sh.B.RequestURL(t, sh.Root.UserToken(t, "bob"), "GET", bVW, "", nil)
	framework.RequireCode(t, r, "bob listing shard b's initializing virtual workspace", 403)
	framework.Eventually(t, 30*time.Second, 500*time.Millisecond, "alice to list shard b's initializing virtual workspace", func() (bool, string) {
		r := sh.B.RequestURL(t, sh.Root.UserToken(t, "alice"), "GET", bVW, "", nil)
		return r.Code == 200 && strings.Contains(r.String(), org.Path+":gated-on-b") && !strings.Contains(r.String(), "gated-on-root"), r.String()
	})

	cfg := &rest.Config{Host: sh.Proxy.URL + "/clusters/" + org.Path, BearerToken: sh.Root.UserToken(t, "alice"),
		TLSClientConfig: rest.TLSClientConfig{CAFile: caBundle(t, sh)}}
	runInitializer(t, cfg, "gated", corev1alpha1.LogicalClusterInitializer(id))
	for shard, name := range names {
		_, on := framework.WaitWorkspaceReady(t, k, name)
		framework.RequireEqual(t, on, shard, "shard of "+name)
	}
}

// runInitializer runs, until the test ends, a multicluster manager with
// kcp's initializingworkspaces provider for a WorkspaceType that removes
// the type's initializer from every workspace it is given.
func runInitializer(t *testing.T, cfg *rest.Config, typeName string, initializer corev1alpha1.LogicalClusterInitializer) {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1alpha1.AddToScheme, tenancyv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	provider, err := initializingworkspaces.New(cfg, typeName, initializingworkspaces.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := mcmanager.New(cfg, provider, ctrlmanager.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	err = mcbuilder.ControllerManagedBy(mgr).Named("e2e-initializer").For(&corev1alpha1.LogicalCluster{}).
		Complete(mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			cl, err := mgr.GetCluster(ctx, req.ClusterName)
			if err != nil {
				return reconcile.Result{}, err
			}
			lc := &corev1alpha1.LogicalCluster{}
			if err := cl.GetClient().Get(ctx, req.NamespacedName, lc); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			if !initialization.InitializerPresent(initializer, lc.Status.Initializers) {
				return reconcile.Result{}, nil
			}
			patch := client.MergeFrom(lc.DeepCopy())
			lc.Status.Initializers = initialization.EnsureInitializerAbsent(initializer, lc.Status.Initializers)
			return reconcile.Result{}, cl.GetClient().Status().Patch(ctx, lc, patch)
		}))
	if err != nil {
		t.Fatal(err)
	}
	start(t, mgr)
}

// start runs a manager until the test ends.
func start(t *testing.T, mgr mcmanager.Manager) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("manager: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the manager did not stop within 30s")
		}
	})
}

// testTerminators: a WorkspaceType with a terminator lists the terminating
// virtual workspace of each shard; deleted workspaces of the type on both
// shards wait in Terminating until a terminator, on each shard's URL,
// removes itself from their LogicalClusters.
func testTerminators(t *testing.T, sh *framework.Shards) {
	ps := sh.Via
	org := framework.CreatePinnedWorkspace(t, ps, "root", framework.UniqueName("term"), "b")
	k := ps.KubectlFor(org.Path)
	k.RunStdin(t, "apiVersion: tenancy.kcp.io/v1alpha1\nkind: WorkspaceType\nmetadata:\n  name: doomed\nspec:\n  terminator: true\n", "apply", "-f", "-")
	id := org.Cluster + ":doomed"
	urls := map[string]string{}
	for _, shard := range []string{"root", "b"} {
		urls[shard] = vwURL(t, sh, shard) + "/services/terminatingworkspaces/" + id
	}
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "the type to list the terminating virtual workspace of each shard", func() (bool, string) {
		out := k.Run(t, "get", "workspacetype", "doomed", "-o", `jsonpath={range .status.virtualWorkspaces[*]}{.url}{"\n"}{end}`)
		got := strings.Fields(out)
		slices.Sort(got)
		want := []string{urls["b"], urls["root"]}
		slices.Sort(want)
		return slices.Equal(got, want), fmt.Sprintf("%v, want %v", got, want)
	})
	names := map[string]string{"root": "doomed-on-root", "b": "doomed-on-b"}
	for shard, name := range names {
		k.RunStdin(t, framework.PinnedWorkspace(name, shard, org.Path+":doomed"), "apply", "-f", "-")
	}
	for _, name := range names {
		framework.WaitWorkspaceReady(t, k, name)
		k.Run(t, "delete", "workspace", name, "--wait=false")
	}
	for shard, name := range names {
		framework.Eventually(t, time.Minute, 250*time.Millisecond, name+" to wait in Terminating", func() (bool, string) {
			out := k.Run(t, "get", "workspace", name, "-o", `jsonpath={.status.phase}|{.metadata.annotations.core\.kcp\.io/shard}`)
			return out == "Terminating|"+shard, out
		})
	}

	// The terminator, as alice: allowed to terminate workspaces of the type
	// (on b: root asks b).
	k.Run(t, "create", "clusterrolebinding", "alice-admin", "--clusterrole=cluster-admin", "--user=alice")
	lcs := corev1alpha1.SchemeGroupVersion.WithResource("logicalclusters")
	for shard, url := range urls {
		s := map[string]*framework.Server{"root": sh.Root, "b": sh.B}[shard]
		base := framework.VirtualWorkspaceConfig(s.RESTConfig(t, ""), url, "*")
		base.BearerToken = sh.Root.UserToken(t, "alice")
		var items []unstructured.Unstructured
		framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "alice to list shard "+shard+"'s terminating virtual workspace", func() (bool, string) {
			list, err := dynamic.NewForConfigOrDie(base).Resource(lcs).List(framework.CallContext(t), metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			items = list.Items
			return len(items) == 1 && items[0].GetAnnotations()["kcp.io/path"] == org.Path+":"+names[shard], fmt.Sprint(len(items), " listed")
		})
		one := rest.CopyConfig(base)
		one.Host = url + "/clusters/" + items[0].GetAnnotations()["kcp.io/cluster"]
		c := dynamic.NewForConfigOrDie(one).Resource(lcs)
		lc, err := c.Get(framework.CallContext(t), "cluster", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("reading the LogicalCluster through shard %s's terminating virtual workspace: %v", shard, err)
		}
		terms, _, _ := unstructured.NestedStringSlice(lc.Object, "status", "terminators")
		terms = slices.DeleteFunc(terms, func(s string) bool { return s == id })
		if err := unstructured.SetNestedStringSlice(lc.Object, terms, "status", "terminators"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.UpdateStatus(framework.CallContext(t), lc, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("removing the terminator through shard %s's terminating virtual workspace: %v", shard, err)
		}
	}
	for _, name := range names {
		framework.Eventually(t, time.Minute, 250*time.Millisecond, name+" to be gone", func() (bool, string) {
			_, errOut, err := k.RunErr(t, "get", "workspace", name)
			return err != nil && strings.Contains(errOut, "NotFound"), errOut
		})
	}
}
