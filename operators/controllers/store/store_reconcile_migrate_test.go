package store

import (
	"context"
	"os"
	"slices"
	"testing"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
	"github.com/meshplane/meshplane/operators/fgaclient"
	"github.com/meshplane/meshplane/sdk/testing/framework"
	"github.com/meshplane/meshplane/sdk/testing/openfga"
)

func TestMain(m *testing.M) {
	code := m.Run()
	framework.CleanupBinaries()
	os.Exit(code)
}

// TestMigrateTupleIDs: a store written by the security-operator before
// escaped, namespaced ids is rewritten once by the migration and the
// tuples steps against a real OpenFGA: organization acme (its Store's
// spec.tuples) was created by oidc:carol, written "user:oidc.carol";
// account team (tuples in no spec) by a service account; a Store tuple
// makes another service account a member. All keep their access under
// the ids the webhook now checks, a grant on a namespaced object without
// namespace opens nothing, running again (a restart) writes nothing, and
// removing carol's tuples from the spec revokes them.
func TestMigrateTupleIDs(t *testing.T) {
	srv := openfga.Start(t, openfga.Options{})
	ctx := context.Background()
	c, err := fgaclient.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	storeID, err := c.CreateStore(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	model, _, err := fga.ComposeSkipping(fga.Module{Name: fga.CoreModuleName, Contents: fga.CoreModule}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.WriteModelIfChanged(ctx, storeID, "", model); err != nil {
		t.Fatal(err)
	}

	const carol, robot, viewer = "oidc:carol", "system:serviceaccount:ops:robot", "system:serviceaccount:ops:viewer"
	acme, team := fga.AccountObject("orgs1", "acme"), fga.AccountObject("acme1", "team")
	// What the old security-operator wrote.
	orgTuples := []corev1alpha1.Tuple{
		{Object: "role:core_platform-mesh_io_account/orgs1/acme/owner", Relation: "assignee", User: "user:oidc.carol"},
		{Object: "core_platform-mesh_io_account:orgs1/acme", Relation: "owner", User: "role:core_platform-mesh_io_account/orgs1/acme/owner#assignee"},
		{Object: "core_platform-mesh_io_account:orgs1/acme", Relation: "member", User: "user:system.serviceaccount.ops.viewer"},
	}
	teamTuples := []corev1alpha1.Tuple{
		{Object: "role:core_platform-mesh_io_account/acme1/team/owner", Relation: "assignee", User: "user:system.serviceaccount.ops.robot"},
		{Object: "core_platform-mesh_io_account:acme1/team", Relation: "owner", User: "role:core_platform-mesh_io_account/acme1/team/owner#assignee"},
		{Object: "core_platform-mesh_io_account:acme1/team", Relation: "parent", User: "core_platform-mesh_io_account:orgs1/acme"},
	}
	// A grant on a namespaced object without namespace: it cannot be
	// migrated and must not grant anything.
	unnamespacedGrant := corev1alpha1.Tuple{Object: "core_secret:team1/dbcreds", Relation: "member", User: "user:bob"}
	if err := c.Write(ctx, storeID, append(append(append([]corev1alpha1.Tuple{}, orgTuples...), teamTuples...), unnamespacedGrant), nil); err != nil {
		t.Fatal(err)
	}
	st := newState()
	st.store.Status.StoreID = storeID
	st.store.Spec.Tuples = orgTuples
	st.store.Status.ManagedTuples = orgTuples

	check := func(object, relation, user string) bool {
		t.Helper()
		ok, err := c.Check(ctx, storeID, corev1alpha1.Tuple{Object: object, Relation: relation, User: fga.UserID(user)})
		if err != nil {
			t.Fatalf("%s %s %s: %v", user, relation, object, err)
		}
		return ok
	}
	access := []struct{ object, relation, user string }{{acme, "owner", carol}, {team, "owner", carol}, {team, "owner", robot}, {acme, "get", viewer}}
	for _, a := range access {
		if check(a.object, a.relation, a.user) {
			t.Fatalf("%s is %s of %s before the migration: the test shows nothing", a.user, a.relation, a.object)
		}
	}

	writes := 0
	write := func(ctx context.Context, id string, add, remove []corev1alpha1.Tuple) error {
		writes++
		return c.Write(ctx, id, add, remove)
	}
	creators := map[string]string{"orgs1/acme": carol, "acme1/team": robot}
	mig := &migrator{creator: func(_ context.Context, cluster, name string) (string, error) { return creators[cluster+"/"+name], nil }}
	tuples := &tuplesStep{write: write, migrator: mig}
	for _, s := range []step{&migrateStep{read: c.Read, write: write, migrator: mig}, tuples} {
		if res := s.reconcile(ctx, st); !res.done {
			t.Fatalf("%T did not finish: %+v", s, st.store.Status.Conditions)
		}
	}
	for _, a := range access {
		if !check(a.object, a.relation, a.user) {
			t.Errorf("%s lost %s of %s with the migration", a.user, a.relation, a.object)
		}
	}
	all, err := c.Read(ctx, storeID, "")
	if err != nil {
		t.Fatal(err)
	}
	want := append(fga.AccountTuples("orgs1", "acme", carol, "", ""), fga.AccountTuples("acme1", "team", robot, "orgs1", "acme")...)
	want = append(want, corev1alpha1.Tuple{Object: acme, Relation: "member", User: fga.UserID(viewer)}, unnamespacedGrant)
	for _, w := range want {
		if !slices.Contains(all, w) {
			t.Errorf("tuple %s missing after the migration", w)
		}
	}
	if len(all) != len(want) {
		t.Errorf("the store holds %d tuples after the migration, want %d: %v", len(all), len(want), all)
	}
	if got := st.store.Status.ManagedTuples; len(got) != 3 || !slices.Contains(got, fga.AccountTuples("orgs1", "acme", carol, "", "")[0]) {
		t.Errorf("managedTuples %v, want the organization's tuples in the current format", got)
	}
	// The unmigratable grant opens neither namespace's dbcreds.
	for _, ns := range []string{"public", "prod"} {
		obj := fga.ObjectID("core_secret", "team1", ns, "dbcreds")
		ok, err := c.CheckContextual(ctx, storeID, corev1alpha1.Tuple{Object: obj, Relation: "get", User: fga.UserID("bob")},
			[]corev1alpha1.Tuple{{Object: obj, Relation: "parent", User: fga.NamespaceObject("team1", ns)}})
		if err != nil || ok {
			t.Errorf("bob get %s: %v, %v; want denied", obj, ok, err)
		}
	}

	// A restart: the store is read again, nothing written.
	before := writes
	restarted := &migrator{creator: mig.creator}
	for _, s := range []step{&migrateStep{read: c.Read, write: write, migrator: restarted}, &tuplesStep{write: write, migrator: restarted}} {
		if res := s.reconcile(ctx, st); !res.done {
			t.Fatalf("%T did not finish on the second run", s)
		}
	}
	if writes != before {
		t.Errorf("the second run wrote %d times, want none", writes-before)
	}

	// Revoking through the spec (still in the old spelling) still works.
	st.store.Spec.Tuples = orgTuples[2:]
	if res := tuples.reconcile(ctx, st); !res.done {
		t.Fatal("the tuples step did not finish")
	}
	if check(acme, "owner", carol) || check(team, "owner", carol) || !check(acme, "get", viewer) {
		t.Error("removing carol's owner tuples from the spec did not revoke exactly them")
	}
}
