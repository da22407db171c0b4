package fga

import (
	"strings"
	"testing"

	"github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// TestScopeAllowsTheOrganizationsOwnTuples: what the security-operator
// writes for an organization (ownership, an account's owner, parent and
// member, grants to users, owner roles and groups, a namespaced object)
// stays in its scope, long names (shortened ids) included.
func TestScopeAllowsTheOrganizationsOwnTuples(t *testing.T) {
	s := Scope{OrgsCluster: "orgs", Org: "acme", InOrg: func(c string) bool { return c == "acmews" || c == "teamws" }}
	long := strings.Repeat("n", 300)
	for _, tp := range []v1alpha1.Tuple{
		{Object: OwnerRole("orgs", "acme"), Relation: RelationAssignee, User: UserID("alice")},
		{Object: AccountObject("orgs", "acme"), Relation: RelationOwner, User: OwnerRole("orgs", "acme") + "#" + RelationAssignee},
		{Object: AccountObject("acmews", "team"), Relation: RelationParent, User: AccountObject("orgs", "acme")},
		{Object: AccountObject("acmews", "team"), Relation: RelationMember, User: UserID("bob")},
		{Object: AccountObject("acmews", "team"), Relation: RelationMember, User: GroupMembers("devs")},
		{Object: AccountObject("acmews", "team"), Relation: RelationMember, User: UserType + ":*"},
		{Object: NamespaceObject("teamws", "default"), Relation: RelationParent, User: AccountObject("acmews", "team")},
		{Object: ObjectID("orders_example_io_order", "teamws", "default", long), Relation: RelationOwner, User: UserID(long)},
		{Object: OwnerRole("acmews", long), Relation: RelationAssignee, User: UserID("alice")},
	} {
		if err := s.Allows(tp); err != nil {
			t.Errorf("refused: %v", err)
		}
	}
}

// TestScopeRefusesOtherOrganizations is the attack on a shared store: a
// tuple written for acme that names evil's objects (its account, its
// namespace, its owner role, its Account in root:orgs, as object or as
// userset subject), a group or user object (their tuples would reach
// every organization), a wildcard object or an id whose cluster cannot be
// read is refused.
func TestScopeRefusesOtherOrganizations(t *testing.T) {
	s := Scope{OrgsCluster: "orgs", Org: "acme", InOrg: func(c string) bool { return c == "acmews" }}
	mine := AccountObject("acmews", "team")
	for name, tp := range map[string]v1alpha1.Tuple{
		"another org's account":             {Object: AccountObject("evilws", "team"), Relation: RelationMember, User: UserID("mallory")},
		"another org's namespace":           {Object: NamespaceObject("evilws", "default"), Relation: RelationParent, User: mine},
		"another org's owner role":          {Object: OwnerRole("evilws", "team"), Relation: RelationAssignee, User: UserID("mallory")},
		"another org's Account in orgs":     {Object: AccountObject("orgs", "evil"), Relation: RelationOwner, User: UserID("mallory")},
		"another org's owner role in orgs":  {Object: OwnerRole("orgs", "evil"), Relation: RelationAssignee, User: UserID("mallory")},
		"root:orgs itself":                  {Object: NamespaceObject("orgs", "default"), Relation: RelationParent, User: AccountObject("orgs", "acme")},
		"another org's members as subject":  {Object: mine, Relation: RelationMember, User: AccountObject("evilws", "team") + "#" + RelationMember},
		"another org's owners as subject":   {Object: mine, Relation: RelationOwner, User: OwnerRole("orgs", "evil") + "#" + RelationAssignee},
		"another org's account as parent":   {Object: mine, Relation: RelationParent, User: AccountObject("evilws", "x")},
		"a group's members":                 {Object: GroupID("devs"), Relation: RelationMember, User: UserID("mallory")},
		"a user object":                     {Object: UserID("alice"), Relation: RelationOwner, User: UserID("mallory")},
		"a wildcard object":                 {Object: AccountType + ":*", Relation: RelationMember, User: UserID("mallory")},
		"a wildcard userset":                {Object: mine, Relation: RelationMember, User: GroupType + ":*#" + RelationMember},
		"a role of another shape":           {Object: RoleType + ":evilws/admin", Relation: RelationAssignee, User: UserID("mallory")},
		"an id without cluster":             {Object: AccountType + ":team", Relation: RelationMember, User: UserID("mallory")},
		"a cluster cut by the hash":         {Object: AccountType + ":" + strings.Repeat("e", 230) + HashMarker + strings.Repeat("a", 32), Relation: RelationMember, User: UserID("mallory")},
		"an escaped cluster of another org": {Object: AccountType + ":evil|2Fws/team", Relation: RelationMember, User: UserID("mallory")},
		"no type":                           {Object: ":acmews/team", Relation: RelationMember, User: UserID("mallory")},
	} {
		if err := s.Allows(tp); err == nil {
			t.Errorf("%s: %s allowed", name, tp)
		}
	}
	// No organization's clusters known: nothing outside root:orgs.
	if err := (Scope{OrgsCluster: "orgs", Org: "acme"}).Allows(v1alpha1.Tuple{Object: mine, Relation: RelationMember, User: UserID("bob")}); err == nil {
		t.Error("a Scope without InOrg allowed a workspace's tuple")
	}
}
