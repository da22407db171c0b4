package workspaces

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// vwLogicalClusters lists the LogicalClusters of a lifecycle virtual
// workspace (<vw url>/clusters/*) as token and returns their paths.
func vwLogicalClusters(t *testing.T, s *framework.Server, token, vw string) ([]string, *framework.Response) {
	t.Helper()
	path := strings.TrimPrefix(vw, s.BaseURL) + "/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters"
	r := s.Request(t, token, http.MethodGet, path, nil)
	if r.Err != nil || r.Code != http.StatusOK {
		return nil, r
	}
	var list corev1alpha1.LogicalClusterList
	r.JSON(t, &list)
	var paths []string
	for _, lc := range list.Items {
		paths = append(paths, lc.Annotations[framework.PathAnnotation])
	}
	sort.Strings(paths)
	return paths, r
}

// requireVWPaths checks what a lifecycle virtual workspace lists.
func requireVWPaths(t *testing.T, s *framework.Server, vw string, want []string, what string) {
	t.Helper()
	sort.Strings(want)
	var last string
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, what, func() (bool, string) {
		paths, r := vwLogicalClusters(t, s, s.KCPAdminToken(t), vw)
		if r.Err != nil || r.Code != http.StatusOK {
			t.Fatalf("%s: listing LogicalClusters on %s/clusters/* as kcp-admin: %s", what, vw, r)
		}
		last = fmt.Sprintf("listed %v, want %v", paths, want)
		return slices.Equal(paths, want), last
	})
}

// TestWorkspaceInitializer runs an initializer for a custom WorkspaceType as
// a controller-runtime controller on the type's initializing virtual
// workspace, and checks that workspaces of the type wait for it.
func TestWorkspaceInitializer(t *testing.T) {
	t.Parallel()
	s := server(t)
	root := adminClient(t, s, "root")
	typeName := framework.UniqueName("e2e-init")
	id := "root:" + typeName
	wt := s.CreateWorkspaceType(t, typeName, true, false)
	vw := framework.VirtualWorkspaceURL(wt, tenancyv1alpha1.VirtualWorkspaceTypeInitializing)
	framework.RequireEqual(t, vw, s.BaseURL+"/services/initializingworkspaces/"+id, "initializing virtual workspace URL in the status of WorkspaceType "+typeName)
	if got := framework.VirtualWorkspaceURL(wt, tenancyv1alpha1.VirtualWorkspaceTypeTerminating); got != "" {
		t.Fatalf("WorkspaceType %s has no terminator but lists a terminating virtual workspace %q", typeName, got)
	}

	names := []string{framework.UniqueName("e2e-initws"), framework.UniqueName("e2e-initws")}
	var paths []string
	for _, n := range names {
		createWorkspace(t, root, n, typeName)
		deleteWorkspaceLater(t, root, n)
		paths = append(paths, "root:"+n)
	}
	clusters := map[string]string{} // path -> cluster
	for _, n := range names {
		ws := waitWorkspacePhase(t, root, n, corev1alpha1.LogicalClusterPhaseInitializing, 60*time.Second)
		if !slices.Contains(ws.Status.Initializers, corev1alpha1.LogicalClusterInitializer(id)) {
			t.Fatalf("an Initializing workspace of type %s should list initializer %s: %s", id, id, describeWorkspace(ws))
		}
		clusters["root:"+n] = ws.Spec.Cluster
	}
	requireStaysInPhase(t, root, names[0], corev1alpha1.LogicalClusterPhaseInitializing, 3*time.Second, "nobody removed initializer "+id+" yet")

	// the virtual workspace lists exactly the clusters carrying the
	// initializer, and only for users allowed to initialize the type
	requireVWPaths(t, s, vw, paths, "the initializing virtual workspace to list both workspaces")
	if _, r := vwLogicalClusters(t, s, s.UserToken(t, "bob"), vw); r.Err != nil || r.Code != http.StatusForbidden {
		t.Fatalf("bob has no initialize permission on WorkspaceType %s, listing its initializing virtual workspace should be 403, got %s", typeName, r)
	}

	ctrl := startLifecycleController(t, roleInitializer, id, vw, s.ContextRESTConfig(t, "root", ""),
		func(ctx context.Context, c client.Client, cluster string, lc *corev1alpha1.LogicalCluster) error {
			cm := &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "initialized-by", Namespace: "default"},
				Data:       map[string]string{"initializer": id, "cluster": cluster, "path": lc.Annotations[framework.PathAnnotation]},
			}
			err := c.Create(ctx, cm)
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			if err != nil {
				// namespace default may still be on its way (root:universal)
				return fmt.Errorf("creating configmap default/initialized-by: %w", err)
			}
			return nil
		})

	for _, n := range names {
		p := "root:" + n
		waitWorkspacePhase(t, root, n, corev1alpha1.LogicalClusterPhaseReady, 90*time.Second)
		c := adminClient(t, s, p)
		cm := waitConfigMap(t, c, p, "default", "initialized-by", 10*time.Second)
		framework.RequireData(t, cm, map[string]string{"initializer": id, "cluster": clusters[p], "path": p}, "configmap initialized-by made by the initializer in "+p)
		lc := &corev1alpha1.LogicalCluster{}
		if err := c.Get(testContext(t, time.Minute), client.ObjectKey{Name: "cluster"}, lc); err != nil {
			t.Fatalf("getting the LogicalCluster of %s: %v", p, err)
		}
		if lc.Status.Phase != corev1alpha1.LogicalClusterPhaseReady || len(lc.Status.Initializers) != 0 {
			t.Fatalf("the LogicalCluster of %s should be Ready without initializers: %s", p, describeLogicalCluster(lc))
		}
	}
	framework.RequireEqual(t, fmt.Sprint(ctrl.finishedPaths()), fmt.Sprint(paths), "workspaces the initializer finished")
	for _, p := range ctrl.seenPaths() {
		if !slices.Contains(paths, p) {
			t.Fatalf("the initializing virtual workspace of %s showed cluster %q, which is not of that type (seen %v)", id, p, ctrl.seenPaths())
		}
	}

	// done: the clusters left the virtual workspace
	requireVWPaths(t, s, vw, nil, "the initializing virtual workspace to be empty once both workspaces are initialized")
	cl := clusters[paths[0]]
	r := s.Request(t, s.KCPAdminToken(t), http.MethodGet, strings.TrimPrefix(vw, s.BaseURL)+"/clusters/"+cl+"/api/v1/namespaces", nil)
	framework.RequireCode(t, r, "a Ready cluster through the initializing virtual workspace", http.StatusForbidden, http.StatusNotFound)
}

// TestWorkspaceTerminator runs a terminator for a custom WorkspaceType on the
// type's terminating virtual workspace and checks that a deleted workspace of
// the type waits for it.
func TestWorkspaceTerminator(t *testing.T) {
	t.Parallel()
	s := server(t)
	root := adminClient(t, s, "root")
	typeName := framework.UniqueName("e2e-term")
	id := "root:" + typeName
	wt := s.CreateWorkspaceType(t, typeName, false, true)
	vw := framework.VirtualWorkspaceURL(wt, tenancyv1alpha1.VirtualWorkspaceTypeTerminating)
	framework.RequireEqual(t, vw, s.BaseURL+"/services/terminatingworkspaces/"+id, "terminating virtual workspace URL in the status of WorkspaceType "+typeName)

	name := framework.UniqueName("e2e-termws")
	p := "root:" + name
	createWorkspace(t, root, name, typeName)
	deleteWorkspaceLater(t, root, name)
	ws := waitWorkspacePhase(t, root, name, corev1alpha1.LogicalClusterPhaseReady, 90*time.Second)
	cluster := ws.Spec.Cluster
	inside := adminClient(t, s, p)
	lc := &corev1alpha1.LogicalCluster{}
	if err := inside.Get(testContext(t, time.Minute), client.ObjectKey{Name: "cluster"}, lc); err != nil {
		t.Fatalf("getting the LogicalCluster of %s: %v", p, err)
	}
	if !slices.Contains(lc.Status.Terminators, corev1alpha1.LogicalClusterTerminator(id)) {
		t.Fatalf("the LogicalCluster of a workspace of type %s should carry terminator %s: %s", id, id, describeLogicalCluster(lc))
	}
	if err := inside.Create(testContext(t, time.Minute), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "precious", Namespace: "default"}, Data: map[string]string{"keep": "me"},
	}); err != nil {
		t.Fatalf("creating configmap precious in %s: %v", p, err)
	}
	requireVWPaths(t, s, vw, nil, "the terminating virtual workspace to list nothing while no workspace of the type is deleted")

	if err := root.Delete(testContext(t, time.Minute), &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatalf("deleting workspace %s: %v", name, err)
	}
	ws = waitWorkspacePhase(t, root, name, corev1alpha1.LogicalClusterPhaseTerminating, 60*time.Second)
	if ws.DeletionTimestamp == nil || !slices.Contains(ws.Status.Terminators, corev1alpha1.LogicalClusterTerminator(id)) {
		t.Fatalf("a deleted workspace of type %s waiting for its terminator should have a deletionTimestamp and list terminator %s: %s", id, id, describeWorkspace(ws))
	}
	requireStaysInPhase(t, root, name, corev1alpha1.LogicalClusterPhaseTerminating, 5*time.Second, "nobody removed terminator "+id+" yet")
	requireVWPaths(t, s, vw, []string{p}, "the terminating virtual workspace to list the deleted workspace")
	if _, r := vwLogicalClusters(t, s, s.UserToken(t, "bob"), vw); r.Err != nil || r.Code != http.StatusForbidden {
		t.Fatalf("bob has no terminate permission on WorkspaceType %s, listing its terminating virtual workspace should be 403, got %s", typeName, r)
	}

	var mu sync.Mutex
	sawData := map[string]map[string]string{}
	ctrl := startLifecycleController(t, roleTerminator, id, vw, s.ContextRESTConfig(t, "root", ""),
		func(ctx context.Context, c client.Client, cluster string, lc *corev1alpha1.LogicalCluster) error {
			// a terminator may still read the content of the cluster
			cm := &corev1.ConfigMap{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "precious"}, cm); err != nil {
				return fmt.Errorf("reading configmap default/precious through the terminating virtual workspace: %w", err)
			}
			mu.Lock()
			sawData[cluster] = cm.Data
			mu.Unlock()
			return nil
		})

	waitWorkspaceGone(t, root, name, 2*time.Minute)
	framework.RequireEqual(t, fmt.Sprint(ctrl.finishedPaths()), fmt.Sprint([]string{p}), "workspaces the terminator finished")
	mu.Lock()
	framework.RequireEqual(t, fmt.Sprint(sawData[cluster]), fmt.Sprint(map[string]string{"keep": "me"}), "configmap precious as read by the terminator")
	mu.Unlock()
	r := s.Request(t, s.KCPAdminToken(t), http.MethodGet, "/clusters/"+p+"/api/v1/namespaces/default/configmaps", nil)
	framework.RequireStatus(t, r, "workspace path "+p+" after the workspace is gone", http.StatusNotFound, "")
	r = s.AdminRequest(t, http.MethodGet, "/clusters/"+cluster+"/api/v1/namespaces/default/configmaps/precious", nil)
	framework.RequireStatus(t, r, "configmap precious in logical cluster "+cluster+" after the workspace is gone (content purged)", http.StatusNotFound, "")
	requireVWPaths(t, s, vw, nil, "the terminating virtual workspace to be empty once the workspace is gone")
}
