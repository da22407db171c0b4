package fidelity

import (
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestDefaultNamespaceIsKept checks that the default and kube-system
// namespaces of a workspace cannot be deleted, with kube's Forbidden, and
// that deleting the workspace still removes it with its contents.
func TestDefaultNamespaceIsKept(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "keepns")
	ws := s.CreateWorkspaces(t, org.Path, "w")[0]
	k := s.KubectlFor(ws.Path)
	k.Run(t, "create", "configmap", "kept", "-n", "default", "--from-literal=a=b")
	for _, ns := range []string{"default", "kube-system"} {
		out, stderr, err := k.RunErr(t, "delete", "namespace", ns, "--wait=false")
		framework.RequireFails(t, out, stderr, err, "kubectl delete namespace "+ns,
			`namespaces "`+ns+`" is forbidden: this namespace may not be deleted`)
	}
	k.Run(t, "get", "configmap", "kept", "-n", "default")
	if r := s.AdminRequest(t, "GET", "/clusters/*/api/v1/configmaps", nil); !containsCluster(r.Body, ws.Cluster) {
		t.Fatalf("the wildcard list of configmaps shows none of %s: %s", ws.Cluster, r)
	}

	workspaces := s.Dynamic(t, org.Path).Resource(framework.WorkspaceGVR)
	if err := workspaces.Delete(framework.CallContext(t), ws.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting workspace %s: %v", ws.Path, err)
	}
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "workspace "+ws.Path+" to be deleted", func() (bool, string) {
		_, err := workspaces.Get(framework.CallContext(t), ws.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), framework.ErrString(err)
	})
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "the configmaps of "+ws.Cluster+" to be gone", func() (bool, string) {
		r := s.AdminRequest(t, "GET", "/clusters/*/api/v1/configmaps", nil)
		return r.Code == 200 && !containsCluster(r.Body, ws.Cluster), r.String()
	})
}

func containsCluster(body []byte, cluster string) bool {
	return strings.Contains(string(body), `"kcp.io/cluster":"`+cluster+`"`)
}
