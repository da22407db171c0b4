package fgaclient_test

import (
	"context"
	"fmt"
	"testing"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"

	"github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
	"github.com/meshplane/meshplane/operators/fgaclient"
	"github.com/meshplane/meshplane/sdk/testing/openfga"
)

func coreModel(t *testing.T, extra ...fga.Module) (*openfgav1.AuthorizationModel, int) {
	t.Helper()
	m, rejected, err := fga.ComposeSkipping(fga.Module{Name: fga.CoreModuleName, Contents: fga.CoreModule}, extra)
	if err != nil || len(rejected) != 0 {
		t.Fatalf("composing: %v %v", err, rejected)
	}
	return m, len(m.GetTypeDefinitions())
}

// Against a real OpenFGA, over its HTTP API and over its gRPC API: a
// store, the model written once and not again while it is the same, 200
// bound resource types accepted, tuples written and deleted idempotently,
// checks that follow them.
func TestClient(t *testing.T) {
	t.Run("http", func(t *testing.T) { testClient(t, false) })
	t.Run("grpc", func(t *testing.T) { testClient(t, true) })
}

func testClient(t *testing.T, overGRPC bool) {
	srv := openfga.Start(t, openfga.Options{})
	ctx := context.Background()
	c, err := fgaclient.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if overGRPC {
		if err := c.UseGRPC(srv.GRPC); err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	id, err := c.CreateStore(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := c.StoreExists(ctx, id); err != nil || !ok {
		t.Fatalf("store %s exists = %v, %v", id, ok, err)
	}
	if ok, err := c.StoreExists(ctx, "01ARZ3NDEKTSV4RRFFQ69G5FAV"); err != nil || ok {
		t.Fatalf("unknown store exists = %v, %v", ok, err)
	}

	model, _ := coreModel(t)
	modelID, wrote, err := c.WriteModelIfChanged(ctx, id, "", model)
	if err != nil || !wrote {
		t.Fatalf("first model write: wrote=%v err=%v", wrote, err)
	}
	again, wrote, err := c.WriteModelIfChanged(ctx, id, modelID, model)
	if err != nil || wrote || again != modelID {
		t.Fatalf("unchanged model: wrote=%v id=%s (was %s) err=%v", wrote, again, modelID, err)
	}
	// Without the current id, the store's newest model is compared.
	again, wrote, err = c.WriteModelIfChanged(ctx, id, "", model)
	if err != nil || wrote || again != modelID {
		t.Fatalf("unchanged model, no current id: wrote=%v id=%s (was %s) err=%v", wrote, again, modelID, err)
	}

	var mods []fga.Module
	for i := 0; i < 200; i++ {
		r := fga.Resource{Group: fmt.Sprintf("p%03d.example.io", i), Plural: "widgets", Singular: "widget", Namespaced: i%2 == 1}
		mods = append(mods, fga.Module{Name: r.ModuleName(), Contents: fga.ResourceModule(r)})
	}
	big, types := coreModel(t, mods...)
	bigID, wrote, err := c.WriteModelIfChanged(ctx, id, modelID, big)
	if err != nil || !wrote {
		t.Fatalf("model with 200 bound resource types (%d types): wrote=%v err=%v", types, wrote, err)
	}
	if _, wrote, err := c.WriteModelIfChanged(ctx, id, bigID, big); err != nil || wrote {
		t.Fatalf("the big model was written again: wrote=%v err=%v", wrote, err)
	}

	// alice owns org acme (through its owner role), team is below acme.
	tuples := append(fga.AccountTuples("orgs", "acme", "alice", "", ""), fga.AccountTuples("acmecl", "team", "", "orgs", "acme")...)
	if err := c.Write(ctx, id, tuples, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(ctx, id, tuples, nil); err != nil {
		t.Fatalf("writing the same tuples again: %v", err)
	}
	team := fga.AccountObject("acmecl", "team")
	check := func(user, relation, object string, want bool) {
		t.Helper()
		got, err := c.Check(ctx, id, v1alpha1.Tuple{Object: object, Relation: relation, User: user})
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("check %s %s %s = %v, want %v", user, relation, object, got, want)
		}
	}
	check("user:alice", "owner", team, true)
	check("user:alice", "create_core_namespaces", team, true)
	check("user:bob", "member", team, false)
	bob := v1alpha1.Tuple{Object: team, Relation: "member", User: fga.UserID("bob")}
	if err := c.Write(ctx, id, []v1alpha1.Tuple{bob}, nil); err != nil {
		t.Fatal(err)
	}
	check("user:bob", "get", team, true)
	check("user:bob", "list_core_namespaces", team, true)
	check("user:bob", "create_core_namespaces", team, false)
	// OpenFGA refuses one tuple twice in a call; the client sends it once.
	if err := c.Write(ctx, id, nil, []v1alpha1.Tuple{bob, bob}); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(ctx, id, nil, []v1alpha1.Tuple{bob}); err != nil {
		t.Fatalf("deleting a tuple already gone: %v", err)
	}
	check("user:bob", "get", team, false)

	got, err := c.Read(ctx, id, team)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("tuples of %s: %v, want owner and parent", team, got)
	}
	if all, err := c.Read(ctx, id, ""); err != nil || len(all) != len(tuples) {
		t.Fatalf("every tuple of the store: %v, %v; want the %d written", all, err, len(tuples))
	}
	if name, ok, err := c.StoreName(ctx, id); err != nil || !ok || name != "acme" {
		t.Fatalf("store name = %q, %v, %v; want acme", name, ok, err)
	}

	stores, err := c.ListStores(ctx)
	if err != nil || len(stores) != 1 || stores[0].Name != "acme" {
		t.Fatalf("stores = %v, %v", stores, err)
	}
	if err := c.DeleteStore(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteStore(ctx, id); err != nil {
		t.Fatalf("deleting a deleted store: %v", err)
	}
	if stores, err := c.ListStores(ctx); err != nil || len(stores) != 0 {
		t.Fatalf("stores after deletion = %v, %v", stores, err)
	}
	if _, ok, err := c.StoreName(ctx, id); err != nil || ok {
		t.Fatalf("a deleted store exists = %v, %v", ok, err)
	}
	// OpenFGA's delete is soft: a deleted store still answers Checks from
	// its tuples (why the security-operator deletes them first).
	check("user:alice", "owner", team, true)
	const unknown = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
	if got, err := c.Read(ctx, unknown, team); err != nil || len(got) != 0 {
		t.Fatalf("tuples of a store that does not exist = %v, %v", got, err)
	}
	if m, err := c.Model(ctx, unknown, modelID); err != nil || m != nil {
		t.Fatalf("model of a store that does not exist = %v, %v", m, err)
	}
}

// TestWriteOverGRPC: with UseGRPC tuples are written and deleted through
// OpenFGA's gRPC API, idempotently, and checks over HTTP follow them.
func TestWriteOverGRPC(t *testing.T) {
	srv := openfga.Start(t, openfga.Options{})
	ctx := context.Background()
	c, err := fgaclient.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.UseGRPC(srv.GRPC); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	id, err := c.CreateStore(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	model, _ := coreModel(t)
	if _, _, err := c.WriteModelIfChanged(ctx, id, "", model); err != nil {
		t.Fatal(err)
	}
	org := fga.AccountObject("orgs", "acme")
	owner := v1alpha1.Tuple{Object: org, Relation: "owner", User: "user:alice"}
	tuples := fga.AccountTuples("orgs", "acme", "alice", "", "")
	for range 2 {
		if err := c.Write(ctx, id, tuples, nil); err != nil {
			t.Fatalf("writing (again) over gRPC: %v", err)
		}
	}
	if ok, err := c.Check(ctx, id, owner); err != nil || !ok {
		t.Fatalf("alice owns acme = %v, %v after the gRPC write", ok, err)
	}
	for range 2 {
		if err := c.Write(ctx, id, nil, tuples); err != nil {
			t.Fatalf("deleting (again) over gRPC: %v", err)
		}
	}
	if ok, err := c.Check(ctx, id, owner); err != nil || ok {
		t.Fatalf("alice owns acme = %v, %v after the gRPC delete", ok, err)
	}
	if err := c.Write(ctx, "01ARZ3NDEKTSV4RRFFQ69G5FAV", tuples, nil); err == nil {
		t.Fatal("a write to a store that does not exist passed")
	}
}
