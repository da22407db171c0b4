package fidelity

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestRootExportsKcpAPIs checks that root exports kcp's own APIs as kcp
// does (tenancy.kcp.io, topology.kcp.io, shards.core.kcp.io, each with an
// identity), and that a permission claim naming tenancy.kcp.io workspaces
// by that identity hash, as manifests written for kcp do, is valid and
// works through the APIExport virtual workspace.
func TestRootExportsKcpAPIs(t *testing.T) {
	t.Parallel()
	s := server(t)
	root := framework.Workspace{Path: "root", Cluster: "root"}
	identities := map[string]string{}
	for _, name := range []string{"tenancy.kcp.io", "topology.kcp.io", "shards.core.kcp.io"} {
		identities[name] = s.WaitExportIdentity(t, root, name)
	}
	org := s.CreateOrg(t, "rootexports")
	ws := s.CreateWorkspaces(t, org.Path, "provider", "consumer")
	provider, consumer := ws[0], ws[1]
	pk := s.KubectlFor(provider.Path)
	pk.Run(t, "apply", "-f", framework.Apigen(t, gadgetsCRD))
	pk.Run(t, "patch", "apiexport", "bind.example.com", "--type=merge", "-p",
		fmt.Sprintf(`{"spec":{"permissionClaims":[{"group":"tenancy.kcp.io","resource":"workspaces","verbs":["get","list","watch"],"identityHash":%q}]}}`,
			identities["tenancy.kcp.io"]))
	s.WaitExportIdentity(t, provider, "bind.example.com")
	b := s.Bind(t, consumer, "gadgets", provider, "bind.example.com", []any{map[string]any{
		"group": "tenancy.kcp.io", "resource": "workspaces", "verbs": []any{"get", "list", "watch"},
		"identityHash": identities["tenancy.kcp.io"], "selector": map[string]any{"matchAll": true}, "state": "Accepted"}})
	if c, _ := framework.Condition(b, "PermissionClaimsValid"); c["status"] != "True" {
		t.Fatalf("PermissionClaimsValid of a claim naming root's tenancy.kcp.io identity: %s", framework.Compact(b.Object["status"]))
	}
	s.CreateWorkspaces(t, consumer.Path, "child")
	url := s.EndpointSliceURL(t, provider, "bind.example.com")
	for _, cluster := range []string{consumer.Cluster, "*"} {
		framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "workspaces of the consumer through the virtual workspace on "+cluster, func() (bool, string) {
			r := s.RequestURL(t, s.AdminToken(t), "GET", url+"/clusters/"+cluster+"/apis/tenancy.kcp.io/v1alpha1/workspaces", "", nil)
			if r.Err != nil || r.Code != 200 {
				return false, r.String()
			}
			var l unstructured.UnstructuredList
			r.JSON(t, &l)
			for _, it := range l.Items {
				if it.GetName() == "child" && it.GetAnnotations()[framework.ClusterAnnotation] == consumer.Cluster {
					return true, ""
				}
			}
			return false, r.String()
		})
	}
	got, err := s.Dynamic(t, "root").Resource(framework.APIExportGVR).Get(framework.CallContext(t), "tenancy.kcp.io", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h, _, _ := unstructured.NestedString(got.Object, "status", "identityHash"); len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
		t.Errorf("root's tenancy.kcp.io export identity %q, want a hex sha256", h)
	}
}

// TestCrossClusterWorkspaceList checks kcp's conformance test: Workspaces
// are listed across all logical clusters as
// /clusters/*/apis/tenancy.kcp.io/v1alpha1/workspaces:<identity of root's
// tenancy.kcp.io export>; another identity names nothing (404).
func TestCrossClusterWorkspaceList(t *testing.T) {
	t.Parallel()
	s := server(t)
	identity := s.WaitExportIdentity(t, framework.Workspace{Path: "root", Cluster: "root"}, "tenancy.kcp.io")
	var want []string
	for _, prefix := range []string{"crosslist-a", "crosslist-b"} {
		org := s.CreateOrg(t, prefix)
		s.CreateWorkspaces(t, org.Path, "child")
		want = append(want, org.Cluster+"/child")
	}
	path := "/clusters/*/apis/tenancy.kcp.io/v1alpha1/workspaces:"
	r := s.AdminRequest(t, "GET", path+identity, nil)
	framework.RequireCode(t, r, "the wildcard list of workspaces with the tenancy.kcp.io identity", 200)
	var list unstructured.UnstructuredList
	r.JSON(t, &list)
	got := map[string]bool{}
	for _, it := range list.Items {
		got[it.GetAnnotations()["kcp.io/cluster"]+"/"+it.GetName()] = true
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("the wildcard list of workspaces lacks %s (%d items)", w, len(list.Items))
		}
	}
	framework.RequireCode(t, s.AdminRequest(t, "GET", path+strings.Repeat("0f", 32), nil), "the wildcard list of workspaces with another identity", 404)
}
