package serviceaccounts

import (
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

const aggregatedRole = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: monitoring
aggregationRule:
  clusterRoleSelectors:
  - matchLabels:
      rbac.example.com/aggregate-to-monitoring: "true"
rules: []
`

func partRole(name, resource string) string {
	return `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: ` + name + `
  labels:
    rbac.example.com/aggregate-to-monitoring: "true"
rules:
- apiGroups: [""]
  resources: ["` + resource + `"]
  verbs: ["get", "list"]
`
}

// TestClusterRoleAggregationPerWorkspace checks that an aggregated
// ClusterRole collects the rules of the matching ClusterRoles of its own
// workspace, follows their changes, and never pulls in another
// workspace's roles.
func TestClusterRoleAggregationPerWorkspace(t *testing.T) {
	s := server(t)
	org := s.CreateOrg(t, "sa-aggregation")
	wss := s.CreateWorkspaces(t, org.Path, "a", "b")
	a, b := s.KubectlFor(wss[0].Path), s.KubectlFor(wss[1].Path)
	a.RunStdin(t, aggregatedRole, "apply", "-f", "-")
	a.RunStdin(t, partRole("monitoring-configmaps", "configmaps"), "apply", "-f", "-")
	b.RunStdin(t, aggregatedRole, "apply", "-f", "-")
	b.RunStdin(t, partRole("monitoring-secrets", "secrets"), "apply", "-f", "-")

	resources := func(k *framework.Kubectl) string {
		return strings.TrimSpace(k.Run(t, "get", "clusterrole", "monitoring", "-o", "jsonpath={.rules[*].resources[*]}"))
	}
	wait := func(k *framework.Kubectl, where, want string) {
		t.Helper()
		framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "monitoring in "+where+" to aggregate "+want, func() (bool, string) {
			got := resources(k)
			return got == want, "rules cover resources " + got
		})
	}
	wait(a, "a", "configmaps")
	wait(b, "b", "secrets")

	// A new matching role in a extends a's only.
	a.RunStdin(t, partRole("monitoring-leases", "leases"), "apply", "-f", "-")
	wait(a, "a", "configmaps leases")
	framework.RequireEqual(t, resources(b), "secrets", "monitoring in b after a role was added in a")

	// The aggregated role grants what it aggregated.
	a.Run(t, "create", "namespace", "team")
	a.Run(t, "create", "serviceaccount", "watcher", "-n", "team")
	a.Run(t, "create", "clusterrolebinding", "watcher-monitoring", "--clusterrole=monitoring", "--serviceaccount=team:watcher")
	watcher := tokenKubectl(t, s, wss[0].Path, strings.TrimSpace(a.Run(t, "create", "token", "watcher", "-n", "team")))
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "watcher to list configmaps through the aggregated role", func() (bool, string) {
		out, stderr, err := watcher.RunErr(t, "get", "configmaps", "-n", "team")
		return err == nil, out + stderr
	})
	out, stderr, err := watcher.RunErr(t, "get", "secrets", "-n", "team")
	framework.RequireFails(t, out, stderr, err, "watcher listing secrets (aggregated only in b)", "forbidden")

	// A role that stops matching takes its rules away.
	a.Run(t, "label", "clusterrole", "monitoring-configmaps", "rbac.example.com/aggregate-to-monitoring-")
	wait(a, "a", "leases")
}
