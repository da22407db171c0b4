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

// TestWorkspaceDeletionWaitsForContentFinalizers: as kcp's logical cluster
// deletion, a deleted Workspace's content is deleted object by object and
// awaited: a finalizer on an object inside keeps the Workspace (phase
// Deleting, condition WorkspaceContentDeleted False naming what is left)
// until it is released; content without finalizers goes at once. Before
// the fix the content was purged from storage at once and the Workspace
// went with it, finalizers or not.
func TestWorkspaceDeletionWaitsForContentFinalizers(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "e2e-contentfin")
	held := s.CreateWorkspaces(t, org.Path, "held")[0]
	parent, inside := s.KubectlFor(org.Path), s.KubectlFor(held.Cluster)
	inside.Run(t, "create", "namespace", "team")
	inside.Run(t, "create", "configmap", "plain", "-n", "team")
	inside.RunStdin(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: held, namespace: default, finalizers: [example.com/hold]}
`, "apply", "-f", "-")

	parent.Run(t, "delete", "workspace", "held", "--wait=false")
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "Workspace held to be Deleting with its content held by example.com/hold", func() (bool, string) {
		out, stderr, err := parent.RunErr(t, "get", "workspace", "held", "-o",
			`jsonpath={.status.phase}|{.status.conditions[?(@.type=="WorkspaceContentDeleted")].status}|{.status.conditions[?(@.type=="WorkspaceContentDeleted")].message}`)
		if err != nil {
			return false, stderr
		}
		return strings.HasPrefix(out, "Deleting|False|Some resources are remaining: namespaces. has 1 resource instances"), out
	})
	// Content without finalizers is gone; the held object is marked deleted.
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "namespace team to be gone", func() (bool, string) {
		_, stderr, err := inside.RunErr(t, "get", "namespace", "team")
		return err != nil && strings.Contains(stderr, "NotFound"), stderr
	})
	framework.RequireContains(t, inside.Run(t, "get", "configmap", "held", "-n", "default", "-o", "jsonpath={.metadata.deletionTimestamp}"), "T",
		"deletionTimestamp of configmap held in the Deleting workspace")
	framework.RequireContains(t, parent.Run(t, "get", "workspace", "held", "-o", "jsonpath={.metadata.deletionTimestamp}"), "T",
		"deletionTimestamp of Workspace held while its content is held")

	inside.Run(t, "patch", "configmap", "held", "-n", "default", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "Workspace held to be gone once its content is released", func() (bool, string) {
		_, stderr, err := parent.RunErr(t, "get", "workspace", "held")
		return err != nil && strings.Contains(stderr, "NotFound"), stderr
	})
}
