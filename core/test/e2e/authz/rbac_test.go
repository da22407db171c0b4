package authz

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestRBACPerCluster checks that a token user (not in system:masters) is
// authorized by RBAC in the request's cluster only.
func TestRBACPerCluster(t *testing.T) {
	s := server(t)
	const user = "bob"
	const ns = "team"
	clusterA, adminA := s.NewCluster(t, "e2e-rbac-a")
	clusterB, adminB := s.NewCluster(t, "e2e-rbac-b")
	for _, k := range []*framework.Kubectl{adminA, adminB} {
		k.Run(t, "create", "namespace", ns)
		k.Run(t, "create", "configmap", "cfg", "-n", ns, "--from-literal=k=v")
	}
	userA := s.KubectlAsUser(t, user, clusterA)
	userB := s.KubectlAsUser(t, user, clusterB)
	token := s.UserToken(t, user)
	listPath := func(cluster string) string {
		return fmt.Sprintf("/clusters/%s/api/v1/namespaces/%s/configmaps", cluster, ns)
	}
	canI := func(k *framework.Kubectl, args ...string) string {
		t.Helper()
		out, stderr, err := k.RunErr(t, append([]string{"auth", "can-i"}, args...)...)
		// can-i exits 1 for "no"; anything else is a real failure.
		if err != nil && framework.ExitCode(err) != 1 {
			t.Fatalf("kubectl auth can-i %s failed: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		// "no" may be followed by " - <reason>".
		answer, _, _ := strings.Cut(strings.TrimSpace(out), " ")
		return answer
	}

	// Before any binding: forbidden everywhere.
	out, stderr, err := userA.RunErr(t, "get", "configmaps", "-n", ns)
	framework.RequireFails(t, out, stderr, err, "listing configmaps in a before the RoleBinding", "forbidden", `"bob"`)
	framework.RequireStatus(t, s.Request(t, token, "GET", listPath(clusterA), nil), "raw list in a before the RoleBinding", 403, "Forbidden")
	framework.RequireEqual(t, canI(userA, "list", "configmaps", "-n", ns), "no", "kubectl auth can-i list configmaps in a before the RoleBinding")

	// Grant read access in cluster a only.
	adminA.Run(t, "create", "role", "cm-reader", "-n", ns, "--verb=get,list,watch", "--resource=configmaps")
	adminA.Run(t, "create", "rolebinding", "bob-cm-reader", "-n", ns, "--role=cm-reader", "--user="+user)

	framework.Eventually(t, 30*time.Second, 500*time.Millisecond, "bob to be allowed to list configmaps in a after the RoleBinding", func() (bool, string) {
		r := s.Request(t, token, "GET", listPath(clusterA), nil)
		return r.Err == nil && r.Code == 200, r.String()
	})
	out = userA.Run(t, "get", "configmaps", "-n", ns, "-o", "name")
	framework.RequireContains(t, out, "configmap/cfg", "bob listing configmaps in a")
	framework.RequireEqual(t, strings.TrimSpace(userA.Run(t, "get", "configmap", "cfg", "-n", ns, "-o", "jsonpath={.data.k}")), "v", "bob reading configmap cfg in a")
	framework.RequireEqual(t, canI(userA, "list", "configmaps", "-n", ns), "yes", "kubectl auth can-i list configmaps in a after the RoleBinding")
	framework.RequireEqual(t, canI(userA, "get", "configmaps", "-n", ns), "yes", "kubectl auth can-i get configmaps in a after the RoleBinding")

	// The role grants nothing else.
	framework.RequireEqual(t, canI(userA, "create", "configmaps", "-n", ns), "no", "kubectl auth can-i create configmaps in a (role only reads)")
	framework.RequireEqual(t, canI(userA, "list", "secrets", "-n", ns), "no", "kubectl auth can-i list secrets in a")
	framework.RequireEqual(t, canI(userA, "list", "configmaps", "-n", "default"), "no", "kubectl auth can-i list configmaps in another namespace of a")
	out, stderr, err = userA.RunErr(t, "create", "configmap", "sneaky", "-n", ns)
	framework.RequireFails(t, out, stderr, err, "bob creating a configmap in a", "forbidden")
	framework.RequireStatus(t, s.Request(t, token, "POST", listPath(clusterA), framework.ConfigMapJSON(t, "sneaky", nil)), "raw create by bob in a", 403, "Forbidden")

	// Cluster b is untouched by a's RoleBinding.
	out, stderr, err = userB.RunErr(t, "get", "configmaps", "-n", ns)
	framework.RequireFails(t, out, stderr, err, "listing configmaps in b (binding only in a)", "forbidden")
	framework.RequireStatus(t, s.Request(t, token, "GET", listPath(clusterB), nil), "raw list in b (binding only in a)", 403, "Forbidden")
	framework.RequireEqual(t, canI(userB, "list", "configmaps", "-n", ns), "no", "kubectl auth can-i list configmaps in b")

	// Removing the binding takes the access away again.
	adminA.Run(t, "delete", "rolebinding", "bob-cm-reader", "-n", ns)
	framework.Eventually(t, 30*time.Second, 500*time.Millisecond, "bob to be forbidden in a after deleting the RoleBinding", func() (bool, string) {
		r := s.Request(t, token, "GET", listPath(clusterA), nil)
		return r.Err == nil && r.Code == 403, r.String()
	})
}
