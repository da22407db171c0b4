package sharing

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// testRevocation: bob binds an export on root from his workspace on
// shard b with only verb bind there; once the grant is revoked on root,
// shard b refuses his next binding: the answer b keeps of root's review
// lasts a second at most. The time from the revocation to the first
// refusal is logged.
func testRevocation(t *testing.T, sh *framework.Shards) {
	ps := sh.Via
	org := framework.CreatePinnedWorkspace(t, ps, "root", framework.UniqueName("revoke"), "root")
	provider := framework.CreatePinnedWorkspace(t, ps, org.Path, "provider", "root")
	consumer := framework.CreatePinnedWorkspace(t, ps, org.Path, "consumer", "b")
	ps.ExportCRD(t, provider, gadgetsCRD, "example.org")
	ps.KubectlFor(consumer.Path).Run(t, "create", "clusterrolebinding", "bob-admin", "--clusterrole=cluster-admin", "--user=bob")
	pk := ps.KubectlFor(provider.Path)
	pk.RunStdin(t, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: bind-gadgets}\n"+
		"rules: [{apiGroups: [apis.kcp.io], resources: [apiexports], resourceNames: [example.org], verbs: [bind]}]\n", "apply", "-f", "-")
	pk.Run(t, "create", "clusterrolebinding", "bob-binds", "--clusterrole=bind-gadgets", "--user=bob")
	bob := asUser(t, sh, "bob", consumer.Path)
	binding := func(name string) string {
		return fmt.Sprintf("apiVersion: apis.kcp.io/v1alpha2\nkind: APIBinding\nmetadata:\n  name: %s\nspec:\n  reference:\n    export:\n      path: %s\n      name: example.org\n", name, provider.Path)
	}
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "bob to bind with bind on the export", func() (bool, string) {
		out, errOut, err := bob.RunStdinErr(t, binding("granted"), "create", "-f", "-")
		return err == nil, out + errOut
	})
	// Keep b's answer fresh, then revoke.
	for i := range 3 {
		if out, errOut, err := bob.RunStdinErr(t, binding(fmt.Sprintf("again-%d", i)), "create", "-f", "-"); err != nil {
			t.Fatalf("bob binding again while granted: %v %s %s", err, out, errOut)
		}
	}
	pk.Run(t, "delete", "clusterrolebinding", "bob-binds")
	revoked := time.Now()
	n := 0
	framework.Eventually(t, 30*time.Second, 50*time.Millisecond, "bob refused once bind is revoked on root", func() (bool, string) {
		n++
		out, errOut, err := bob.RunStdinErr(t, binding(fmt.Sprintf("after-%d", n)), "create", "-f", "-")
		return err != nil && strings.Contains(errOut, "may not bind"), out + errOut
	})
	t.Logf("bind revoked on root: refused on shard b after %s (%d attempts)", time.Since(revoked).Round(time.Millisecond), n)
}
