package fidelity

import (
	"testing"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestLifecycleVirtualWorkspacesDiscovery checks that the initializing and
// terminating virtual workspaces answer discovery and readiness like any
// server, for a user allowed to initialize (terminate) the type; without
// the permission discovery is refused.
func TestLifecycleVirtualWorkspacesDiscovery(t *testing.T) {
	t.Parallel()
	s := server(t)
	name := framework.UniqueName("lcdisc")
	wt := s.CreateWorkspaceType(t, name, true, true)
	grantLifecycle(t, s, name, "carol")
	carol, bob := s.UserToken(t, "carol"), s.UserToken(t, "bob")
	for _, typ := range []tenancyv1alpha1.VirtualWorkspaceType{tenancyv1alpha1.VirtualWorkspaceTypeInitializing, tenancyv1alpha1.VirtualWorkspaceTypeTerminating} {
		base := framework.VirtualWorkspaceURL(wt, typ) + "/clusters/*"
		for _, p := range []string{"/api", "/apis", "/apis/core.kcp.io/v1alpha1", "/version", "/readyz", "/livez"} {
			framework.RequireCode(t, s.RequestURL(t, carol, "GET", base+p, "", nil), string(typ)+" virtual workspace: GET "+p+" as a user allowed to use it", 200)
		}
		var groups metav1.APIGroupList
		s.RequestURL(t, carol, "GET", base+"/apis", "", nil).JSON(t, &groups)
		found := false
		for _, g := range groups.Groups {
			found = found || g.Name == "core.kcp.io"
		}
		if !found {
			t.Errorf("%s virtual workspace: the group list lacks core.kcp.io: %s", typ, framework.Compact(groups))
		}
		framework.RequireCode(t, s.RequestURL(t, bob, "GET", base+"/apis", "", nil), string(typ)+" virtual workspace: discovery without the permission", 403)

		k := &framework.Kubectl{Kubeconfig: s.Kubeconfig, CacheDir: t.TempDir(),
			GlobalArgs: []string{"--context", "shard-base", "--server", base, "--token", carol}}
		out := k.Run(t, "api-resources", "--no-headers", "-o", "name")
		framework.RequireContains(t, out, "logicalclusters.core.kcp.io", string(typ)+" virtual workspace: kubectl api-resources on the wildcard")
	}
}

// grantLifecycle lets user initialize and terminate the workspace type
// name (in root), for the test's lifetime.
func grantLifecycle(t *testing.T, s *framework.Server, name, user string) {
	t.Helper()
	root := s.KubectlFor("root")
	root.RunStdin(t, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: `+name+`-lifecycle}
rules: [{apiGroups: [tenancy.kcp.io], resources: [workspacetypes], resourceNames: [`+name+`], verbs: [initialize, terminate]}]
`, "apply", "-f", "-")
	root.Run(t, "create", "clusterrolebinding", name+"-"+user, "--clusterrole="+name+"-lifecycle", "--user="+user)
	t.Cleanup(func() { _, _, _ = root.RunErr(t, "delete", "clusterrolebinding", name+"-"+user) })
}
