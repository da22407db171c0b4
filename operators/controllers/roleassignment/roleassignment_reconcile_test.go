package roleassignment

import (
	"testing"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
)

// The roles a RoleAssignment may name are the account relations a user
// holds directly: owner, member, and what a provider's module adds; never
// the IAM, verb or parent relations.
func TestAssignableRoles(t *testing.T) {
	model, err := fga.Compose([]fga.Module{{Name: fga.CoreModuleName, Contents: fga.CoreModule}, {Name: "viewers", Contents: `module viewers

extend type core_platform-mesh_io_account
  relations
    define viewer: [user]
    define auditor: [user:*]
    define reader: [group#member]
`}})
	if err != nil {
		t.Fatal(err)
	}
	groups := assignableRoles(model, true)
	for _, r := range []string{"owner", "member", "reader"} {
		if !groups[r] {
			t.Errorf("group role %s missing from %v", r, groups)
		}
	}
	if groups["viewer"] || groups[fga.RelationManageIAMRoles] || groups["parent"] {
		t.Errorf("group roles %v hold a relation groups may not have", groups)
	}
	roles := assignableRoles(model, false)
	for _, r := range []string{"owner", "member", "viewer"} {
		if !roles[r] {
			t.Errorf("role %s missing from %v", r, roles)
		}
	}
	for _, r := range []string{"parent", "get", "delete", fga.RelationManageIAMRoles, fga.RelationGetIAMRoles, "auditor", "create_core_namespaces"} {
		if roles[r] {
			t.Errorf("%s is no role a RoleAssignment may grant", r)
		}
	}
}

// Deleting a RoleAssignment deletes only a user's direct relation on its
// own account that no other RoleAssignment grants: never the founder's
// owner role, a parent link or another account's tuple, whatever its
// status claims.
func TestRevocable(t *testing.T) {
	account := fga.AccountObject("orgs1", "acme")
	s := &state{account: account, others: map[corev1alpha1.Tuple]bool{
		{Object: account, Relation: "member", User: "user:carol"}: true,
	}}
	for _, c := range []struct {
		t    corev1alpha1.Tuple
		want bool
	}{
		{corev1alpha1.Tuple{Object: account, Relation: "member", User: "user:bob"}, true},
		{corev1alpha1.Tuple{Object: account, Relation: "owner", User: "user:alice"}, true},
		{corev1alpha1.Tuple{Object: account, Relation: "member", User: "user:carol"}, false},
		{corev1alpha1.Tuple{Object: account, Relation: "owner", User: fga.OwnerRole("orgs1", "acme") + "#assignee"}, false},
		{corev1alpha1.Tuple{Object: fga.OwnerRole("orgs1", "acme"), Relation: "assignee", User: "user:alice"}, false},
		{corev1alpha1.Tuple{Object: account, Relation: "parent", User: fga.AccountObject("root1", "x")}, false},
		{corev1alpha1.Tuple{Object: fga.AccountObject("orgs1", "other"), Relation: "member", User: "user:bob"}, false},
		{corev1alpha1.Tuple{Object: account, Relation: "member", User: "user:*"}, false},
		{corev1alpha1.Tuple{Object: account, Relation: "member", User: fga.GroupMembers("ops")}, true},
		{corev1alpha1.Tuple{Object: account, Relation: "member", User: fga.GroupID("ops")}, false},
		{corev1alpha1.Tuple{Object: account, Relation: "member", User: "group:*#member"}, false},
		{corev1alpha1.Tuple{Object: account, Relation: "member", User: fga.OwnerRole("orgs1", "acme") + "#member"}, false},
	} {
		if got := s.revocable(c.t); got != c.want {
			t.Errorf("revocable(%s) = %v, want %v", c.t, got, c.want)
		}
	}
}
