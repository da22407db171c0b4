package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

func groupAssignment(name, group, role string) string {
	return fmt.Sprintf("apiVersion: core.platform-mesh.io/v1alpha1\nkind: RoleAssignment\nmetadata:\n  name: %s\nspec:\n  subject:\n    kind: Group\n    name: %q\n  role: %s\n", name, group, role)
}

// TestGroupRoleAssignments (issue 23): a RoleAssignment to a group gives
// its role to whoever the core authenticates with that group, and to
// nobody else: not to a user named like the group, not to a member of
// another group. erin (group oidc:ops) reads groupsorg once ops are
// members, may not write; frank (group ops:db) owns the account team-a
// only. Deleting the grant refuses erin again.
func TestGroupRoleAssignments(t *testing.T) {
	p := startPlatform(t)
	const org, team = "root:orgs:groupsorg", "root:orgs:groupsorg:team-a"
	as := func(user, group string, workspace string, args ...string) (string, error) {
		full := []string{"--as", user}
		if group != "" {
			full = append(full, "--as-group", group)
		}
		return p.kubectl(t, "base", workspace, "", append(full, args...)...)
	}
	eventually := func(what string, want bool, user, group, workspace string, args ...string) {
		t.Helper()
		framework.Eventually(t, 60*time.Second, 500*time.Millisecond, what, func() (bool, string) {
			out, err := as(user, group, workspace, args...)
			if want {
				return err == nil, out
			}
			return err != nil && strings.Contains(out, "Forbidden"), out
		})
	}
	refused := func(what, user, group, workspace string, args ...string) {
		t.Helper()
		out, err := as(user, group, workspace, args...)
		framework.RequireFails(t, "", out, err, what, "Forbidden")
	}

	p.must(t, "alice", "root:orgs", account("groupsorg", "org"), "create", "-f", "-")
	p.must(t, "alice", "root:orgs", "", "wait", "--for=condition=Ready", "account/groupsorg", "--timeout=120s")
	p.eventually(t, "alice to list the accounts of her organization", true, "alice", org, "get", "accounts")
	p.must(t, "alice", org, account("team-a", "account"), "create", "-f", "-")
	p.must(t, "alice", org, "", "wait", "--for=condition=Ready", "account/team-a", "--timeout=120s")
	p.eventually(t, "alice to list the namespaces of team-a", true, "alice", team, "get", "namespaces")

	refused("erin (group oidc:ops) before any grant", "erin", "oidc:ops", org, "get", "accounts")

	p.must(t, "alice", org, groupAssignment("ops-member", "oidc:ops", "member"), "create", "-f", "-")
	p.must(t, "alice", org, "", "wait", "--for=condition=Ready", "roleassignment/ops-member", "--timeout=60s")
	p.must(t, "alice", team, groupAssignment("db-owner", "ops:db", "owner"), "create", "-f", "-")
	p.must(t, "alice", team, "", "wait", "--for=condition=Ready", "roleassignment/db-owner", "--timeout=60s")
	if got := strings.TrimSpace(p.must(t, "alice", org, "", "get", "roleassignment", "ops-member", "-o", "jsonpath={.status.tuple.user}")); got != "group:oidc|3Aops#member" {
		t.Errorf("the group grant's tuple user is %q, want group:oidc|3Aops#member", got)
	}

	eventually("erin (group oidc:ops) to read groupsorg", true, "erin", "oidc:ops", org, "get", "accounts")
	eventually("erin to read team-a below it", true, "erin", "oidc:ops", team, "get", "namespaces")
	refused("erin (a member through her group) creating a ConfigMap", "erin", "oidc:ops", org, "create", "configmap", "x", "-n", "default", "--dry-run=server")
	refused("erin deleting account team-a", "erin", "oidc:ops", org, "delete", "account", "team-a", "--dry-run=server")
	// Nobody else gets the group's role.
	refused("a user named oidc:ops (not in the group)", "oidc:ops", "", org, "get", "accounts")
	refused("erin in group ops (another group)", "erin", "ops", org, "get", "accounts")
	refused("erin in group oidc:ops:x", "erin", "oidc:ops:x", org, "get", "accounts")

	// An owner group owns team-a only.
	eventually("frank (group ops:db) to write in team-a", true, "frank", "ops:db", team, "create", "configmap", "x", "-n", "default", "--dry-run=server")
	refused("frank (owner of team-a) reading groupsorg", "frank", "ops:db", org, "get", "accounts")
	// An owner through a group manages the account's grants.
	out, err := as("frank", "ops:db", team, "auth", "can-i", "create", "roleassignments.core.platform-mesh.io")
	if f := strings.Fields(out); err != nil || len(f) == 0 || f[len(f)-1] != "yes" {
		t.Errorf("frank (owner of team-a through ops:db) may not create RoleAssignments there: %v %s", err, out)
	}

	// Revoking the group's grant refuses its members.
	p.must(t, "alice", org, "", "delete", "roleassignment", "ops-member")
	eventually("erin to be refused once the group's grant is gone", false, "erin", "oidc:ops", org, "get", "accounts")
}
