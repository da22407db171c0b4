package sharing

import (
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

var leversCRD = framework.SchemalessCRD("example.net", "levers", "Lever")

// testPolicy: the maximal permission policy of an export on root bounds
// its consumers on shard b as on one shard (core/test/e2e/fidelity
// TestMaximalPermissionPolicy): shard b asks root (a deep review) what
// the provider's RBAC grants the apis.kcp.io:binding:-prefixed user.
func testPolicy(t *testing.T, sh *framework.Shards) {
	ps := sh.Via
	org := framework.CreatePinnedWorkspace(t, ps, "root", framework.UniqueName("policy"), "root")
	provider := framework.CreatePinnedWorkspace(t, ps, org.Path, "provider", "root")
	consumer := framework.CreatePinnedWorkspace(t, ps, org.Path, "consumer", "b")
	ps.ExportCRD(t, provider, leversCRD, "example.net")
	pk := ps.KubectlFor(provider.Path)
	pk.Run(t, "patch", "apiexport", "example.net", "--type=merge", "-p", `{"spec":{"maximalPermissionPolicy":{"local":{}}}}`)
	ps.Bind(t, consumer, "levers", provider, "example.net", nil)
	ps.KubectlFor(consumer.Path).Run(t, "create", "clusterrolebinding", "bob-admin", "--clusterrole=cluster-admin", "--user=bob")
	bob := asUser(t, sh, "bob", consumer.Path)
	lever := func(name string) string {
		return "apiVersion: example.net/v1\nkind: Lever\nmetadata: {name: " + name + ", namespace: default}\n"
	}

	// No policy RBAC in the provider: the consumer's cluster-admin is
	// refused the bound resource, not the others.
	out, errOut, err := bob.RunStdinErr(t, lever("one"), "create", "-f", "-")
	framework.RequireFails(t, out, errOut, err, "bob creating a lever without the provider's policy allowing it", "forbidden")
	bob.Run(t, "get", "configmaps", "-n", "default")

	// The provider's policy allows get, list and create to the prefixed
	// user; delete stays refused.
	pk.RunStdin(t, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: levers-policy}\n"+
		"rules: [{apiGroups: [example.net], resources: [levers], verbs: [get, list, create]}]\n", "apply", "-f", "-")
	pk.Run(t, "create", "clusterrolebinding", "levers-policy", "--clusterrole=levers-policy", "--user=apis.kcp.io:binding:bob")
	framework.Eventually(t, 30*time.Second, 500*time.Millisecond, "bob to create a lever once the policy allows it", func() (bool, string) {
		out, errOut, err := bob.RunStdinErr(t, lever("one"), "create", "-f", "-")
		return err == nil, out + errOut
	})
	bob.Run(t, "get", "levers", "-n", "default", "one")
	out, errOut, err = bob.RunErr(t, "delete", "lever", "one", "-n", "default")
	framework.RequireFails(t, out, errOut, err, "bob deleting a lever (delete not in the provider's policy)", "forbidden")
}
