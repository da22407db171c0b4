package tenancy

import (
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestDeletingWorkspaceTenant: the owner of a deleted workspace may still
// act inside while it is Deleting, as in kcp (to release the finalizers
// that hold its content), but may not remove the LogicalCluster's
// core.kcp.io/logicalcluster finalizer, neither before nor during the
// deletion (kcp's logicalclusterfinalizer admission): without it the
// content deletion would be skipped and the content left in storage.
// Others still have no access.
func TestDeletingWorkspaceTenant(t *testing.T) {
	tn := twoTenants(t)
	s := tn.s
	tn.bobK.RunStdin(t, `apiVersion: tenancy.kcp.io/v1alpha1
kind: Workspace
metadata: {name: going}
`, "create", "-f", "-")
	framework.WaitWorkspacePhase(t, s.RESTConfig(t, tn.bob.Path), "going", "Ready", time.Minute)
	path := tn.bob.Path + ":going"
	inside := s.KubectlAsUser(t, "bob", path)
	inside.RunStdin(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: held, namespace: default, finalizers: [example.com/hold]}
`, "create", "-f", "-")
	dropFinalizers := []string{"patch", "logicalcluster", "cluster", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`}
	out, stderr, err := inside.RunErr(t, dropFinalizers...)
	framework.RequireFails(t, out, stderr, err, "bob removing the LogicalCluster's finalizer of his Ready workspace", "finalizer core.kcp.io/logicalcluster is required")

	tn.bobK.Run(t, "delete", "workspace", "going", "--wait=false")
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "Workspace going to be Deleting, its content held", func() (bool, string) {
		out, stderr, err := tn.bobK.RunErr(t, "get", "workspace", "going", "-o",
			`jsonpath={.status.phase}|{.status.conditions[?(@.type=="WorkspaceContentDeleted")].status}`)
		if err != nil {
			return false, stderr
		}
		return out == "Deleting|False", out
	})
	out, stderr, err = inside.RunErr(t, dropFinalizers...)
	framework.RequireFails(t, out, stderr, err, "bob removing the LogicalCluster's finalizer of his Deleting workspace",
		"removing the finalizer core.kcp.io/logicalcluster is forbidden")
	out, stderr, err = s.KubectlAsUser(t, "alice", path).RunErr(t, "get", "configmaps", "-n", "default")
	framework.RequireFails(t, out, stderr, err, "alice reading in bob's Deleting workspace", "forbidden")

	inside.Run(t, "patch", "configmap", "held", "-n", "default", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "Workspace going to be gone once bob released his finalizer", func() (bool, string) {
		_, stderr, err := tn.bobK.RunErr(t, "get", "workspace", "going")
		return err != nil && strings.Contains(stderr, "NotFound"), stderr
	})
}
