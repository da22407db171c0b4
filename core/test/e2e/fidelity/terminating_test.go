package fidelity

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

var logicalClustersGVR = schema.GroupVersionResource{Group: "core.kcp.io", Version: "v1alpha1", Resource: "logicalclusters"}

// TestTerminatingVirtualWorkspaceOrderAndWatch follows kcp's e2e tests of
// the terminating virtual workspace: a type gamma extending alpha and beta
// gives its workspaces the terminators alpha, beta, gamma in that order
// (before: gamma first); a LogicalCluster that is not deleted is not
// listed although it carries its terminator labels from its creation; a
// watcher sees the deletion as MODIFIED (before: ADDED, the labels were
// set when the deletion started) and the removal of its terminator as
// DELETED. Through it the LogicalCluster is not written (405) and a
// terminator releases only itself (422 otherwise).
func TestTerminatingVirtualWorkspaceOrderAndWatch(t *testing.T) {
	t.Parallel()
	s := server(t)
	root := s.KubectlFor("root")
	alpha, beta, gamma := framework.UniqueName("alpha"), framework.UniqueName("beta"), framework.UniqueName("gamma")
	root.RunStdin(t, `apiVersion: tenancy.kcp.io/v1alpha1
kind: WorkspaceType
metadata: {name: `+alpha+`}
spec: {terminator: true, extend: {with: [{name: universal, path: root}]}}
---
apiVersion: tenancy.kcp.io/v1alpha1
kind: WorkspaceType
metadata: {name: `+beta+`}
spec: {terminator: true, extend: {with: [{name: universal, path: root}]}}
---
apiVersion: tenancy.kcp.io/v1alpha1
kind: WorkspaceType
metadata: {name: `+gamma+`}
spec: {terminator: true, extend: {with: [{name: `+alpha+`, path: root}, {name: `+beta+`, path: root}]}}
`, "apply", "-f", "-")
	t.Cleanup(func() { _, _, _ = root.RunErr(t, "delete", "workspacetype", alpha, beta, gamma) })
	vws := map[string]string{}
	for _, name := range []string{alpha, beta, gamma} {
		framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "WorkspaceType "+name+" to list its terminating virtual workspace", func() (bool, string) {
			var wt tenancyv1alpha1.WorkspaceType
			out := root.Run(t, "get", "workspacetype", name, "-o", "json")
			if err := json.Unmarshal([]byte(out), &wt); err != nil {
				return false, err.Error()
			}
			vws[name] = framework.VirtualWorkspaceURL(&wt, tenancyv1alpha1.VirtualWorkspaceTypeTerminating)
			return vws[name] != "", out
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// kcp-admin through gamma's terminating virtual workspace.
	cfg := s.ContextRESTConfig(t, "root", vws[gamma]+"/clusters/*")
	vw, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}

	org := s.CreateOrg(t, "termorder")
	s.CreateWorkspaceOfType(t, org.Path, "leaving", tenancyv1alpha1.WorkspaceTypeReference{Name: tenancyv1alpha1.WorkspaceTypeName(gamma), Path: "root"})
	ws := framework.WaitWorkspacePhase(t, s.RESTConfig(t, org.Path), "leaving", "Ready", time.Minute)
	want := []corev1alpha1.LogicalClusterTerminator{
		corev1alpha1.LogicalClusterTerminator("root:" + alpha),
		corev1alpha1.LogicalClusterTerminator("root:" + beta),
		corev1alpha1.LogicalClusterTerminator("root:" + gamma),
	}
	if !slices.Equal(ws.Status.Terminators, want) {
		t.Fatalf("terminators of a workspace of type %s (extending %s and %s): got %v, want %v as kcp", gamma, alpha, beta, ws.Status.Terminators, want)
	}

	list, err := vw.Resource(logicalClustersGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing LogicalClusters through the terminating virtual workspace of %s: %v", gamma, err)
	}
	if len(list.Items) != 0 {
		t.Fatalf("the terminating virtual workspace of %s lists %d LogicalClusters while none is deleted", gamma, len(list.Items))
	}
	w, err := vw.Resource(logicalClustersGVR).Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		t.Fatalf("watching LogicalClusters through the terminating virtual workspace of %s: %v", gamma, err)
	}
	defer w.Stop()
	next := func(what string) watch.EventType {
		t.Helper()
		for {
			select {
			case e, ok := <-w.ResultChan():
				if !ok {
					t.Fatalf("watch closed while waiting for %s", what)
				}
				if e.Type == watch.Bookmark || e.Type == watch.Error {
					continue
				}
				return e.Type
			case <-ctx.Done():
				t.Fatalf("no watch event for %s", what)
			}
		}
	}

	s.KubectlFor(org.Path).Run(t, "delete", "workspace", "leaving", "--wait=false")
	if typ := next("the deletion"); typ != watch.Modified {
		t.Fatalf("first watch event of the deleted workspace's LogicalCluster through the terminating virtual workspace: %s, want MODIFIED as kcp", typ)
	}

	// As in kcp: through the virtual workspace the LogicalCluster itself is
	// not written (405), and a terminator removes no other's (422).
	lcURL := vws[alpha] + "/clusters/" + ws.Spec.Cluster + "/apis/core.kcp.io/v1alpha1/logicalclusters/cluster"
	framework.RequireCode(t, s.RequestURL(t, s.KCPAdminToken(t), "PATCH", lcURL, "application/merge-patch+json",
		[]byte(`{"metadata":{"annotations":{"wrong":"wrong"}}}`)), "patching the LogicalCluster (not its status) through the terminating virtual workspace", 405)
	others, _ := json.Marshal(map[string]any{"status": map[string]any{"terminators": want[:1]}})
	r := s.RequestURL(t, s.KCPAdminToken(t), "PATCH", lcURL+"/status", "application/merge-patch+json", others)
	framework.RequireCode(t, r, "terminator root:"+alpha+" removing the others' terminators", 422)
	framework.RequireContains(t, string(r.Body), `only removing the \"root:`+alpha+`\" terminator is supported`, "the refusal")

	// Each terminator removes itself through its own virtual workspace.
	left := slices.Clone(want)
	for _, name := range []string{alpha, beta, gamma} {
		left = left[1:]
		patch, _ := json.Marshal(map[string]any{"status": map[string]any{"terminators": left}})
		framework.RequireCode(t, s.RequestURL(t, s.KCPAdminToken(t), "PATCH",
			vws[name]+"/clusters/"+ws.Spec.Cluster+"/apis/core.kcp.io/v1alpha1/logicalclusters/cluster/status", "application/merge-patch+json", patch),
			"terminator root:"+name+" removing itself", 200)
	}
	for {
		typ := next("the removal of terminator root:" + gamma)
		if typ == watch.Deleted {
			break
		}
		if typ != watch.Modified {
			t.Fatalf("watch event after the removal of terminators: %s, want MODIFIED or DELETED", typ)
		}
	}
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "Workspace leaving to be gone", func() (bool, string) {
		_, stderr, err := s.KubectlFor(org.Path).RunErr(t, "get", "workspace", "leaving")
		return err != nil, stderr
	})
}
