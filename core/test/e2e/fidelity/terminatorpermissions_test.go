package fidelity

import (
	"encoding/json"
	"testing"
	"time"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestTerminatorPermissions: a WorkspaceType's terminatorPermissions bound
// what its terminator does inside a terminating workspace through the
// terminating virtual workspace, as in kcp: a Secret GET outside them is
// 403, a ConfigMap they grant is read, and the LogicalCluster stays the
// terminator's to release (before the fix every request inside was allowed).
func TestTerminatorPermissions(t *testing.T) {
	t.Parallel()
	s := server(t)
	name := framework.UniqueName("termperm")
	root := s.KubectlFor("root")
	root.RunStdin(t, `apiVersion: tenancy.kcp.io/v1alpha1
kind: WorkspaceType
metadata: {name: `+name+`}
spec:
  terminator: true
  extend: {with: [{name: universal, path: root}]}
  terminatorPermissions: [{apiGroups: [""], resources: [configmaps], verbs: [get, list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: `+name+`-terminate}
rules: [{apiGroups: [tenancy.kcp.io], resources: [workspacetypes], resourceNames: [`+name+`], verbs: [terminate]}]
`, "apply", "-f", "-")
	root.Run(t, "create", "clusterrolebinding", name+"-carol", "--clusterrole="+name+"-terminate", "--user=carol")
	t.Cleanup(func() {
		_, _, _ = root.RunErr(t, "delete", "clusterrolebinding", name+"-carol")
		_, _, _ = root.RunErr(t, "delete", "clusterrole", name+"-terminate")
		_, _, _ = root.RunErr(t, "delete", "workspacetype", name)
	})
	var vw string
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "WorkspaceType "+name+" to list its terminating virtual workspace", func() (bool, string) {
		var wt tenancyv1alpha1.WorkspaceType
		out := root.Run(t, "get", "workspacetype", name, "-o", "json")
		if err := json.Unmarshal([]byte(out), &wt); err != nil {
			return false, err.Error()
		}
		vw = framework.VirtualWorkspaceURL(&wt, tenancyv1alpha1.VirtualWorkspaceTypeTerminating)
		return vw != "", out
	})

	org := s.CreateOrg(t, "termperm")
	s.CreateWorkspaceOfType(t, org.Path, "leaving", tenancyv1alpha1.WorkspaceTypeReference{Name: tenancyv1alpha1.WorkspaceTypeName(name), Path: "root"})
	ws := framework.WaitWorkspacePhase(t, s.RESTConfig(t, org.Path), "leaving", "Ready", time.Minute)
	inside := s.KubectlFor(ws.Spec.Cluster)
	inside.Run(t, "create", "configmap", "kept", "-n", "default")
	inside.Run(t, "create", "secret", "generic", "private", "-n", "default", "--from-literal=k=v")

	s.KubectlFor(org.Path).Run(t, "delete", "workspace", "leaving", "--wait=false")
	framework.WaitWorkspacePhase(t, s.RESTConfig(t, org.Path), "leaving", "Terminating", time.Minute)

	carol := s.UserToken(t, "carol")
	base := vw + "/clusters/" + ws.Spec.Cluster
	framework.RequireCode(t, s.RequestURL(t, carol, "GET", base+"/api/v1/namespaces/default/secrets/private", "", nil),
		"the terminator reading a Secret its terminatorPermissions do not grant", 403)
	framework.RequireCode(t, s.RequestURL(t, carol, "DELETE", base+"/api/v1/namespaces/default/configmaps/kept", "", nil),
		"the terminator deleting a ConfigMap its terminatorPermissions only read", 403)
	framework.RequireCode(t, s.RequestURL(t, carol, "GET", base+"/api/v1/namespaces/default/configmaps/kept", "", nil),
		"the terminator reading a ConfigMap its terminatorPermissions grant", 200)
	framework.RequireCode(t, s.RequestURL(t, carol, "GET", base+"/apis/core.kcp.io/v1alpha1/logicalclusters/cluster", "", nil),
		"the terminator reading the LogicalCluster", 200)

	// The terminator releases the workspace.
	patch := []byte(`{"status":{"terminators":[]}}`)
	framework.RequireCode(t, s.RequestURL(t, carol, "PATCH", base+"/apis/core.kcp.io/v1alpha1/logicalclusters/cluster/status", "application/merge-patch+json", patch),
		"the terminator removing itself", 200)
}
