package fgaclient_test

import (
	"context"
	"testing"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"

	"github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
	"github.com/meshplane/meshplane/operators/fgaclient"
	"github.com/meshplane/meshplane/sdk/testing/openfga"
)

// sharedOrg is an organization written as the security-operator writes
// one: its Account in root:orgs owned by its founder through the owner
// role, an account "team" in its workspace (same name in every
// organization) with an owner, a parent and a member.
type sharedOrg struct {
	name, workspace, teamWorkspace string
	founder, member                string
}

func (o sharedOrg) tuples() []v1alpha1.Tuple {
	const orgs = "orgs"
	org, team := fga.AccountObject(orgs, o.name), fga.AccountObject(o.workspace, "team")
	return []v1alpha1.Tuple{
		{Object: fga.OwnerRole(orgs, o.name), Relation: fga.RelationAssignee, User: fga.UserID(o.founder)},
		{Object: org, Relation: fga.RelationOwner, User: fga.OwnerRole(orgs, o.name) + "#" + fga.RelationAssignee},
		{Object: fga.OwnerRole(o.workspace, "team"), Relation: fga.RelationAssignee, User: fga.UserID(o.founder)},
		{Object: team, Relation: fga.RelationOwner, User: fga.OwnerRole(o.workspace, "team") + "#" + fga.RelationAssignee},
		{Object: team, Relation: fga.RelationParent, User: org},
		{Object: team, Relation: fga.RelationMember, User: fga.UserID(o.member)},
	}
}

// checks are the requests the webhook asks for a user of o: reading the
// org's Account, listing and creating configmaps in the team's namespace
// (contextual parent tuple from the request's cluster), owning the team.
func (o sharedOrg) checks(user string) []struct {
	what       string
	tuple      v1alpha1.Tuple
	contextual []v1alpha1.Tuple
} {
	ns, team := fga.NamespaceObject(o.teamWorkspace, "default"), fga.AccountObject(o.workspace, "team")
	parent := []v1alpha1.Tuple{{Object: ns, Relation: fga.RelationParent, User: team}}
	u := fga.UserID(user)
	return []struct {
		what       string
		tuple      v1alpha1.Tuple
		contextual []v1alpha1.Tuple
	}{
		{"get the org Account", v1alpha1.Tuple{Object: fga.AccountObject("orgs", o.name), Relation: "get", User: u}, nil},
		{"list configmaps in team", v1alpha1.Tuple{Object: ns, Relation: "list_core_configmaps", User: u}, parent},
		{"create configmaps in team", v1alpha1.Tuple{Object: ns, Relation: "create_core_configmaps", User: u}, parent},
		{"own team", v1alpha1.Tuple{Object: team, Relation: fga.RelationOwner, User: u}, nil},
	}
}

// TestSharedStoreKeepsOrganizationsApart is the attack on design B
// (docs/authorization.md, Scale): two organizations with identical models
// and identically named accounts in ONE OpenFGA store. Each founder owns
// and each member reads its own organization; neither is allowed
// anything in the other, because every object id carries the logical
// cluster of the object (apis/fga ids), the only thing that tells the
// organizations apart in one store.
func TestSharedStoreKeepsOrganizationsApart(t *testing.T) {
	srv := openfga.Start(t, openfga.Options{})
	c, err := fgaclient.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store, err := c.CreateStore(ctx, "orgs")
	if err != nil {
		t.Fatal(err)
	}
	model, err := fga.Compose([]fga.Module{{Name: fga.CoreModuleName, Contents: fga.CoreModule}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.WriteModelIfChanged(ctx, store, "", model); err != nil {
		t.Fatal(err)
	}
	acme := sharedOrg{name: "acme", workspace: "2a1cme", teamWorkspace: "3t1eam", founder: "alice", member: "bob"}
	evil := sharedOrg{name: "evil", workspace: "7e1vil", teamWorkspace: "8t2eam", founder: "mallory", member: "eve"}
	for _, o := range []sharedOrg{acme, evil} {
		if err := c.Write(ctx, store, o.tuples(), nil); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, q v1alpha1.Tuple, contextual []v1alpha1.Tuple, want bool) {
		t.Helper()
		got, err := c.CheckContextual(ctx, store, q, contextual)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got != want {
			t.Errorf("%s (%s %s %s): allowed=%v, want %v", what, q.User, q.Relation, q.Object, got, want)
		}
	}
	checkAll := func() {
		t.Helper()
		for _, pair := range []struct{ own, other sharedOrg }{{acme, evil}, {evil, acme}} {
			for _, q := range pair.own.checks(pair.own.founder) {
				check(pair.own.founder+" in own org: "+q.what, q.tuple, q.contextual, true)
			}
			for i, q := range pair.own.checks(pair.own.member) {
				// A member of team lists in team's namespace; membership is
				// inherited downwards only, so not the org Account.
				check(pair.own.member+" in own org: "+q.what, q.tuple, q.contextual, i == 1)
			}
			for _, user := range []string{pair.own.founder, pair.own.member} {
				for _, q := range pair.other.checks(user) {
					check(user+" in the other org: "+q.what, q.tuple, q.contextual, false)
				}
			}
		}
	}
	checkAll()
	if t.Failed() {
		return
	}
	// The shared model grows when an organization binds another API
	// (fga.Union of the models): OpenFGA takes the union, the tuples stay
	// and the organizations stay apart.
	bound := func(group string) *openfgav1.AuthorizationModel {
		r := fga.Resource{Group: group, Plural: "orders", Singular: "order", Namespaced: true}
		m, rejected, err := fga.ComposeSkipping(fga.Module{Name: fga.CoreModuleName, Contents: fga.CoreModule},
			[]fga.Module{{Name: r.ModuleName(), Contents: fga.ResourceModule(r)}})
		if err != nil || len(rejected) != 0 {
			t.Fatal(err, rejected)
		}
		return m
	}
	union, added, err := fga.Union(bound("orders.example.io"), bound("invoices.example.io"))
	if err != nil || !added {
		t.Fatalf("union: added=%v, err=%v", added, err)
	}
	if _, _, err := c.WriteModelIfChanged(ctx, store, "", union); err != nil {
		t.Fatal(err)
	}
	checkAll()
}
