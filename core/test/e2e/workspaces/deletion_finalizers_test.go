package workspaces

import (
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestWorkspaceDeletionWaitsForLogicalClusterFinalizers: as in kcp, a
// deleted Workspace stays until its LogicalCluster is gone, and the
// LogicalCluster stays until every finalizer on it is released: the core
// purges the content and releases only its own (before the fix it dropped
// all of them and the Workspace went at once).
func TestWorkspaceDeletionWaitsForLogicalClusterFinalizers(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "e2e-lcfin")
	doomed := s.CreateWorkspaces(t, org.Path, "doomed")[0]
	parent, inside := s.KubectlFor(org.Path), s.KubectlFor(doomed.Cluster)
	inside.Run(t, "create", "configmap", "content", "-n", "default")
	inside.Run(t, "patch", "logicalcluster", "cluster", "--type=json", "-p", `[{"op":"add","path":"/metadata/finalizers/-","value":"example.com/hold"}]`)

	parent.Run(t, "delete", "workspace", "doomed", "--wait=false")
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "the LogicalCluster to be purged and held by example.com/hold only", func() (bool, string) {
		out, stderr, err := inside.RunErr(t, "get", "logicalcluster", "cluster", "-o", `jsonpath={.metadata.finalizers}|{.status.phase}`)
		if err != nil {
			return false, stderr
		}
		return out == `["example.com/hold"]|Deleting`, out
	})
	// The Workspace waits for it.
	framework.RequireContains(t, parent.Run(t, "get", "workspace", "doomed", "-o", "jsonpath={.metadata.deletionTimestamp}"), "T",
		"deletionTimestamp of Workspace doomed while its LogicalCluster is held")
	out, stderr, err := inside.RunErr(t, "get", "configmap", "content", "-n", "default")
	framework.RequireFails(t, out, stderr, err, "the content of the Deleting workspace (purged)", "not found")

	inside.Run(t, "patch", "logicalcluster", "cluster", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "Workspace doomed to be gone once its LogicalCluster is released", func() (bool, string) {
		_, stderr, err := parent.RunErr(t, "get", "workspace", "doomed")
		return err != nil && strings.Contains(stderr, "NotFound"), stderr
	})
}
