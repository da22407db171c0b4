package fidelity

import (
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestRequiredGroups checks kcp's authorization.kcp.io/required-groups: a
// Workspace created with it (by system:masters, as kcp's fixtures do) is
// closed to users in none of the groups, whatever RBAC grants them; a
// child workspace inherits it even if its creator asks otherwise; and,
// better than kcp, the workspace's own admin cannot drop it from the
// LogicalCluster.
func TestRequiredGroups(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "reqgroups")
	admin := s.KubectlFor(org.Path)
	admin.RunStdin(t, `apiVersion: tenancy.kcp.io/v1alpha1
kind: Workspace
metadata:
  name: guarded
  annotations: {authorization.kcp.io/required-groups: "e2e:users"}
`, "create", "-f", "-")
	guarded := org.Path + ":guarded"
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "workspace guarded to be Ready", func() (bool, string) {
		out, _, _ := admin.RunErr(t, "get", "workspace", "guarded", "-o", "jsonpath={.status.phase}")
		return out == "Ready", out
	})
	gk := s.KubectlFor(guarded)
	framework.RequireEqual(t, gk.Run(t, "get", "logicalcluster", "cluster", "-o", `jsonpath={.metadata.annotations.authorization\.kcp\.io/required-groups}`),
		"e2e:users", "the required groups on the LogicalCluster")
	for _, u := range []string{"alice", "carol"} { // alice is in e2e:users, carol is not
		admin.Run(t, "create", "clusterrolebinding", u+"-access", "--clusterrole=system:kcp:workspace:access", "--user="+u)
		gk.Run(t, "create", "clusterrolebinding", u+"-admin", "--clusterrole=cluster-admin", "--user="+u)
	}
	alice, carol := s.KubectlAsUser(t, "alice", guarded), s.KubectlAsUser(t, "carol", guarded)
	alice.Run(t, "get", "configmaps", "-n", "default")
	out, stderr, err := carol.RunErr(t, "get", "configmaps", "-n", "default")
	framework.RequireFails(t, out, stderr, err, "carol (cluster-admin, not in e2e:users) listing configmaps", "forbidden", "user is not a member of required groups: e2e:users")

	// The workspace's admin cannot drop the requirement.
	out, stderr, err = alice.RunErr(t, "annotate", "logicalcluster", "cluster", "authorization.kcp.io/required-groups-")
	framework.RequireFails(t, out, stderr, err, "alice removing the required groups from the LogicalCluster", "forbidden")

	// A child inherits the requirement, whatever its creator asks.
	alice.RunStdin(t, `apiVersion: tenancy.kcp.io/v1alpha1
kind: Workspace
metadata:
  name: child
  annotations: {authorization.kcp.io/required-groups: "anybody"}
`, "create", "-f", "-")
	framework.RequireEqual(t, alice.Run(t, "get", "workspace", "child", "-o", `jsonpath={.metadata.annotations.authorization\.kcp\.io/required-groups}`),
		"e2e:users", "the required groups of the child workspace")
	out, stderr, err = alice.RunErr(t, "annotate", "workspace", "child", "--overwrite", "authorization.kcp.io/required-groups=anybody")
	framework.RequireFails(t, out, stderr, err, "alice changing the required groups of the child workspace", "forbidden")
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "workspace child to be Ready", func() (bool, string) {
		out, _, _ := alice.RunErr(t, "get", "workspace", "child", "-o", "jsonpath={.status.phase}")
		return out == "Ready", out
	})
	child := guarded + ":child"
	s.KubectlFor(child).Run(t, "create", "clusterrolebinding", "carol-admin", "--clusterrole=cluster-admin", "--user=carol")
	r := s.RequestURL(t, s.UserToken(t, "carol"), "GET", s.ClusterURL(child)+"/api/v1/namespaces/default/configmaps", "", nil)
	framework.RequireCode(t, r, "carol listing configmaps in the child workspace", 403)
	framework.RequireContains(t, r.String(), "user is not a member of required groups: e2e:users", "the refusal in the child workspace")
}
