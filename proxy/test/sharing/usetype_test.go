package sharing

import (
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// testUseType: a workspace whose WorkspaceType lives on the other shard
// (an organization's account type in root:orgs on root, its accounts on
// shard b) needs verb "use" on the type, asked of the type's shard as on
// one shard: bob, admin of a workspace on b, is refused the type until he
// may use it (and access its workspace) on root, then creates it; and
// the other way round, a type on b used on root.
func testUseType(t *testing.T, sh *framework.Shards) {
	ps := sh.Via
	org := framework.CreatePinnedWorkspace(t, ps, "root", framework.UniqueName("usetype"), "root")
	for _, c := range []struct{ typeShard, childShard string }{{"root", "b"}, {"b", "root"}} {
		types := framework.CreatePinnedWorkspace(t, ps, org.Path, "types-on-"+c.typeShard, c.typeShard)
		parent := framework.CreatePinnedWorkspace(t, ps, org.Path, "parent-on-"+c.childShard, c.childShard)
		ps.KubectlFor(types.Path).RunStdin(t, "apiVersion: tenancy.kcp.io/v1alpha1\nkind: WorkspaceType\nmetadata:\n  name: squad\nspec: {}\n", "apply", "-f", "-")
		ps.KubectlFor(parent.Path).Run(t, "create", "clusterrolebinding", "bob-admin", "--clusterrole=cluster-admin", "--user=bob")
		child := framework.PinnedWorkspace("squad", c.childShard, types.Path+":squad")
		bob := asUser(t, sh, "bob", parent.Path)

		out, errOut, err := bob.RunStdinErr(t, child, "create", "-f", "-")
		framework.RequireFails(t, out, errOut, err, "bob creating a workspace of "+types.Path+":squad without use", "not allowed to use workspace type")

		ps.KubectlFor(types.Path).RunStdin(t, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: use-squad}\n"+
			"rules:\n- {apiGroups: [tenancy.kcp.io], resources: [workspacetypes], resourceNames: [squad], verbs: [use]}\n- {nonResourceURLs: [/], verbs: [access]}\n", "apply", "-f", "-")
		ps.KubectlFor(types.Path).Run(t, "create", "clusterrolebinding", "bob-uses", "--clusterrole=use-squad", "--user=bob")
		// The refusal above may be cached on the child's shard for a few
		// seconds.
		framework.Eventually(t, 30*time.Second, 500*time.Millisecond, "bob to create a workspace of "+types.Path+":squad on "+c.childShard, func() (bool, string) {
			out, errOut, err := bob.RunStdinErr(t, child, "create", "-f", "-")
			return err == nil, out + errOut
		})
		_, shard := framework.WaitWorkspaceReady(t, ps.KubectlFor(parent.Path), "squad")
		framework.RequireEqual(t, shard, c.childShard, "shard of "+parent.Path+":squad")
	}
}
