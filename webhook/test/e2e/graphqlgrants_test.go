package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestGraphQLRoleAssignments (issue 23): an organization's members and
// their roles through GraphQL: alice (owner) assigns bob the member role
// with a createRoleAssignment mutation; bob lists the RoleAssignments (who
// holds which role) but may not assign or remove one; alice removes it
// with deleteRoleAssignment and bob is refused again.
func TestGraphQLRoleAssignments(t *testing.T) {
	p := startPlatform(t)
	const org = "root:orgs:gqlorg"
	p.must(t, "alice", "root:orgs", account("gqlorg", "org"), "create", "-f", "-")
	p.must(t, "alice", "root:orgs", "", "wait", "--for=condition=Ready", "account/gqlorg", "--timeout=120s")
	p.eventually(t, "alice to list the accounts of her organization", true, "alice", org, "get", "accounts")

	const list = `{ core_platform_mesh_io { v1alpha1 { RoleAssignments { items { metadata { name } spec { subject { kind name } role } status { conditions { type status } } } } } } }`
	const assign = `mutation { core_platform_mesh_io { v1alpha1 { createRoleAssignment(object: {metadata: {name: "bob-member"}, spec: {subject: {kind: User, name: "bob"}, role: "member"}}) { metadata { name } } } } }`
	const remove = `mutation { core_platform_mesh_io { v1alpha1 { deleteRoleAssignment(name: "bob-member") } } }`

	// bob, an outsider, sees nobody's role.
	if out := p.graphql(t, "bob", org, list); !strings.Contains(out, "orbidden") || strings.Contains(out, "bob-member") {
		t.Errorf("bob (an outsider) listing gqlorg's RoleAssignments: %s", out)
	}
	if out := p.graphql(t, "alice", org, assign); !strings.Contains(out, `"name":"bob-member"`) || strings.Contains(out, `"errors"`) {
		t.Fatalf("alice assigning bob the member role through GraphQL: %s", out)
	}
	p.must(t, "alice", org, "", "wait", "--for=condition=Ready", "roleassignment/bob-member", "--timeout=60s")
	framework.Eventually(t, 60*time.Second, 500*time.Millisecond, "bob (a member) to list the RoleAssignments through GraphQL", func() (bool, string) {
		out := p.graphql(t, "bob", org, list)
		return strings.Contains(out, `"subject":{"kind":"User","name":"bob"},"role":"member"`), out
	})
	if out := p.graphql(t, "bob", org, strings.ReplaceAll(strings.ReplaceAll(assign, "bob-member", "bob-owner"), `role: "member"`, `role: "owner"`)); !strings.Contains(out, "orbidden") {
		t.Errorf("bob (a member) made himself owner through GraphQL: %s", out)
	}
	if out := p.graphql(t, "bob", org, remove); !strings.Contains(out, "orbidden") {
		t.Errorf("bob (a member) removed a RoleAssignment through GraphQL: %s", out)
	}
	if out := p.graphql(t, "alice", org, remove); !strings.Contains(out, `"deleteRoleAssignment":true`) {
		t.Fatalf("alice removing bob's role through GraphQL: %s", out)
	}
	framework.Eventually(t, 60*time.Second, 500*time.Millisecond, "bob to be refused once his role is removed", func() (bool, string) {
		out := p.graphql(t, "bob", org, list)
		return strings.Contains(out, "orbidden"), out
	})
}
