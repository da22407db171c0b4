package tenancy

import (
	"net/http"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestSystemIdentitiesInInitializingWorkspace: as in kcp, kcp-admin and
// system:masters may act inside a workspace that is still initializing
// (before the fix kcp-admin was refused with "workspace ... is not
// ready"); the workspace's creator, a tenant who is its admin, is still
// kept out until it is Ready, and so is anybody impersonating kcp-admin's
// group.
func TestSystemIdentitiesInInitializingWorkspace(t *testing.T) {
	t.Parallel()
	tn := twoTenants(t)
	s := tn.s
	name := framework.UniqueName("initgate")
	s.CreateWorkspaceType(t, name, true, false)
	root := s.KubectlFor("root")
	root.RunStdin(t, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: `+name+`-use}
rules: [{apiGroups: [tenancy.kcp.io], resources: [workspacetypes], resourceNames: [`+name+`], verbs: [use]}]
`, "apply", "-f", "-")
	root.Run(t, "create", "clusterrolebinding", name+"-alice", "--clusterrole="+name+"-use", "--user=alice")
	t.Cleanup(func() { _, _, _ = root.RunErr(t, "delete", "clusterrolebinding", name+"-alice") })

	// alice creates the workspace of the type with the initializer; nobody
	// releases it, so it stays Initializing.
	tn.aliceK.RunStdin(t, `apiVersion: tenancy.kcp.io/v1alpha1
kind: Workspace
metadata: {name: initializing}
spec: {type: {name: `+name+`, path: root}}
`, "create", "-f", "-")
	framework.WaitWorkspacePhase(t, s.RESTConfig(t, tn.alice.Path), "initializing", "Initializing", time.Minute)
	ws := tn.alice.Path + ":initializing"
	nsPath := "/clusters/" + ws + "/api/v1/namespaces"
	ns := func(n string) []byte {
		return []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + n + `"}}`)
	}

	for _, tc := range []struct {
		what      string
		token     string
		headers   map[string]string
		namespace string
		want      int
	}{
		{"kcp-admin (system:kcp:admin)", s.KCPAdminToken(t), nil, "by-kcp-admin", http.StatusCreated},
		{"the shard admin (system:masters)", s.AdminToken(t), nil, "by-shard-admin", http.StatusCreated},
		{"alice, the workspace's creator", s.UserToken(t, "alice"), nil, "by-alice", http.StatusForbidden},
		{"the shard admin impersonating alice in system:kcp:admin", s.AdminToken(t),
			map[string]string{"Impersonate-User": "alice", "Impersonate-Group": "system:kcp:admin"}, "by-impersonated", http.StatusForbidden},
	} {
		code, body := request(t, s, tc.token, "POST", nsPath, ns(tc.namespace), tc.headers)
		if code != tc.want {
			t.Errorf("%s: creating namespace %s in the Initializing workspace %s answered %d, want %d: %s", tc.what, tc.namespace, ws, code, tc.want, body)
		}
	}
	code, body := request(t, s, s.KCPAdminToken(t), "GET", nsPath+"/by-kcp-admin", nil, nil)
	framework.RequireEqual(t, code, http.StatusOK, "kcp-admin reading back its namespace in the Initializing workspace: "+body)
}
