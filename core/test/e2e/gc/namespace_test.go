package gc

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestNamespaceDeletionInEachMode: propagationPolicy on a namespace
// (which the namespace controller empties) ends in each mode, and a
// cluster-scoped object owned by the namespace follows the mode.
func TestNamespaceDeletionInEachMode(t *testing.T) {
	s := server(t)
	c := newCluster(t, s, "e2e-gc-ns")
	ctx := framework.CallContext(t)
	for _, mode := range []string{"background", "foreground", "orphan"} {
		name := "ns-" + mode
		c.k.Run(t, "create", "namespace", name)
		c.k.Run(t, "create", "configmap", "inside", "-n", name)
		nsObj, err := c.cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		role := "of-" + name
		if _, err := c.cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role,
			OwnerReferences: []metav1.OwnerReference{ref("v1", "Namespace", name, nsObj.UID, true)}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		c.k.Run(t, "delete", "namespace", name, "--cascade="+mode, "--timeout=60s")
		c.gone(t, "namespace deleted with --cascade="+mode, "namespace", name)
		if left := c.k.Run(t, "get", "configmaps", "-n", name, "-o", "name"); left != "" {
			t.Fatalf("namespace %s went before its content: %s left", name, left)
		}
		if mode == "orphan" {
			c.stays(t, "clusterrole of an orphaning namespace", "clusterrole", role)
			continue
		}
		c.gone(t, "clusterrole owned by the namespace", "clusterrole", role)
	}
}
