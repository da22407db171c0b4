package fidelity

import (
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestLogicalClusterGuarded checks kcp's guard of a workspace's own
// LogicalCluster: its admin (cluster-admin inside) may read it but not
// move its phase back, change its initializers, delete or create one; the
// shard admin may.
func TestLogicalClusterGuarded(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "lcguard")
	ws := s.CreateWorkspaces(t, org.Path, "team")[0]
	s.KubectlFor(ws.Path).Run(t, "create", "clusterrolebinding", "bob-admin", "--clusterrole=cluster-admin", "--user=bob")
	s.KubectlFor(org.Path).Run(t, "create", "clusterrolebinding", "bob-access", "--clusterrole=system:kcp:workspace:access", "--user=bob")
	bob := s.KubectlAsUser(t, "bob", ws.Path)
	framework.RequireEqual(t, bob.Run(t, "get", "logicalcluster", "cluster", "-o", "jsonpath={.status.phase}"), "Ready", "the workspace's LogicalCluster phase read by its admin")

	for _, tc := range []struct {
		what string
		args []string
		want string
	}{
		{"moving the phase back", []string{"patch", "logicalcluster", "cluster", "--subresource=status", "--type=merge", "-p", `{"status":{"phase":"Scheduling"}}`},
			`cannot transition from "Ready" to "Scheduling"`},
		{"adding an initializer", []string{"patch", "logicalcluster", "cluster", "--type=merge", "-p", `{"spec":{"initializers":["root:extra"]}}`},
			"spec.initializers is immutable"},
		{"deleting it", []string{"delete", "logicalcluster", "cluster"}, "LogicalCluster cannot be deleted"},
	} {
		out, stderr, err := bob.RunErr(t, tc.args...)
		framework.RequireFails(t, out, stderr, err, "the workspace admin "+tc.what, tc.want)
	}
	out, stderr, err := bob.RunStdinErr(t, "apiVersion: core.kcp.io/v1alpha1\nkind: LogicalCluster\nmetadata: {name: other}\n", "create", "-f", "-")
	framework.RequireFails(t, out, stderr, err, "the workspace admin creating a LogicalCluster", "LogicalCluster cannot be created")
	// The shard admin is not bound by it.
	s.KubectlFor(ws.Path).Run(t, "label", "logicalcluster", "cluster", "example.com/checked=yes")
	framework.RequireEqual(t, bob.Run(t, "get", "logicalcluster", "cluster", "-o", "jsonpath={.status.phase}"), "Ready", "the phase after the refused updates")
}
