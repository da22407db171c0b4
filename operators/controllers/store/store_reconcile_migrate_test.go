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
// escaped, namespaced ids (an account created by a service account, a
// Store tuple granting another one membership, in the old spelling) is
// rewritten once by the migration and the tuples steps against a real
// OpenFGA; the owner and the member keep their access under the ids the
// webhook now checks, and running again (a restart) writes nothing.
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

	const robot, viewer = "system:serviceaccount:ops:robot", "system:serviceaccount:ops:viewer"
	account := fga.AccountObject("orgs1", "acme")
	// What the old security-operator wrote: account tuples (in no spec)
	// and a Store tuple (in spec and status.managedTuples).
	oldRole := "role:core_platform-mesh_io_account/orgs1/acme/owner"
	written := []corev1alpha1.Tuple{
		{Object: oldRole, Relation: "assignee", User: "user:system.serviceaccount.ops.robot"},
		{Object: "core_platform-mesh_io_account:orgs1/acme", Relation: "owner", User: oldRole + "#assignee"},
	}
	oldMember := corev1alpha1.Tuple{Object: "core_platform-mesh_io_account:orgs1/acme", Relation: "member", User: "user:system.serviceaccount.ops.viewer"}
	// A grant on a namespaced object without namespace: it cannot be
	// migrated and must not grant anything.
	unnamespacedGrant := corev1alpha1.Tuple{Object: "core_secret:team1/dbcreds", Relation: "member", User: "user:bob"}
	if err := c.Write(ctx, storeID, append(written, oldMember, unnamespacedGrant), nil); err != nil {
		t.Fatal(err)
	}
	st := newState()
	st.store.Status.StoreID = storeID
	st.store.Spec.Tuples = []corev1alpha1.Tuple{oldMember}
	st.store.Status.ManagedTuples = []corev1alpha1.Tuple{oldMember}

	check := func(what, relation, user string) bool {
		t.Helper()
		ok, err := c.Check(ctx, storeID, corev1alpha1.Tuple{Object: account, Relation: relation, User: fga.UserID(user)})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return ok
	}
	if check("owner before", "owner", robot) || check("member before", "get", viewer) {
		t.Fatal("the old tuples already answer for the new ids: the test shows nothing")
	}

	writes := 0
	write := func(ctx context.Context, id string, add, remove []corev1alpha1.Tuple) error {
		writes++
		return c.Write(ctx, id, add, remove)
	}
	migrate := &migrateStep{read: c.Read, write: write}
	tuples := &tuplesStep{write: write}
	for _, s := range []step{migrate, tuples} {
		if res := s.reconcile(ctx, st); !res.done {
			t.Fatalf("%T did not finish: %+v", s, st.store.Status.Conditions)
		}
	}
	if !check("owner after", "owner", robot) || !check("member after", "get", viewer) {
		t.Fatal("the service accounts lost their access with the migration")
	}
	all, err := c.Read(ctx, storeID, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tu := range all {
		if m, changed := fga.MigrateTuple(tu); changed {
			t.Errorf("tuple %s left in the old format (current: %s)", tu, m)
		}
	}
	want := fga.AccountTuples("orgs1", "acme", robot, "", "")
	for _, w := range append(want, corev1alpha1.Tuple{Object: account, Relation: "member", User: fga.UserID(viewer)}, unnamespacedGrant) {
		if !slices.Contains(all, w) {
			t.Errorf("tuple %s missing after the migration; the store holds %v", w, all)
		}
	}
	if len(all) != len(want)+2 {
		t.Errorf("the store holds %d tuples after the migration, want %d: %v", len(all), len(want)+2, all)
	}
	if got := st.store.Status.ManagedTuples; len(got) != 1 || got[0].User != fga.UserID(viewer) {
		t.Errorf("managedTuples %v, want the member tuple in the current format", got)
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
	for _, s := range []step{&migrateStep{read: c.Read, write: write}, tuples} {
		if res := s.reconcile(ctx, st); !res.done {
			t.Fatalf("%T did not finish on the second run", s)
		}
	}
	if writes != before {
		t.Errorf("the second run wrote %d times, want none", writes-before)
	}
}
