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
	"k8s.io/apimachinery/pkg/runtime"
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
