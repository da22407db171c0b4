package store

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ktypes "k8s.io/apimachinery/pkg/types"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
)

// fgaStores is an OpenFGA of a few stores: their names, tuples and
// models, as the steps see it through their functions.
type fgaStores struct {
	names  map[string]string
	tuples map[string]map[corev1alpha1.Tuple]bool
	models map[string][]*openfgav1.AuthorizationModel
	made   int
}

func newFGAStores() *fgaStores {
	return &fgaStores{names: map[string]string{}, tuples: map[string]map[corev1alpha1.Tuple]bool{}, models: map[string][]*openfgav1.AuthorizationModel{}}
}

func (f *fgaStores) shared() *sharedStore {
	return &sharedStore{
		listStores: listNamed(f.names),
		createStore: func(_ context.Context, name string) (string, error) {
			f.made++
			id := "SHARED" + strings.Repeat("x", f.made-1)
			f.names[id] = name
			return id, nil
		},
		latestModel: func(_ context.Context, id string) (*openfgav1.AuthorizationModel, error) {
			if ms := f.models[id]; len(ms) > 0 {
				return ms[len(ms)-1], nil
			}
			return nil, nil
		},
		writeModel: func(_ context.Context, id, _ string, m *openfgav1.AuthorizationModel) (string, bool, error) {
			f.models[id] = append(f.models[id], m)
			return "M" + strings.Repeat("I", len(f.models[id])), true, nil
		},
		readAll: func(_ context.Context, id string) ([]corev1alpha1.Tuple, error) {
			var ts []corev1alpha1.Tuple
			for t := range f.tuples[id] {
				ts = append(ts, t)
			}
			return ts, nil
		},
		write: f.write,
	}
}

func (f *fgaStores) write(_ context.Context, id string, add, remove []corev1alpha1.Tuple) error {
	if f.tuples[id] == nil {
		f.tuples[id] = map[corev1alpha1.Tuple]bool{}
	}
	for _, t := range add {
		f.tuples[id][t] = true
	}
	for _, t := range remove {
		delete(f.tuples[id], t)
	}
	return nil
}

// orgState is the Store of organization name (workspace cluster org) in
// root:orgs (orgs1).
func orgState(name, org, uid string) *state {
	return &state{cluster: "orgs1", path: "root:orgs", store: &corev1alpha1.Store{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: ktypes.UID(uid), Generation: 1,
			Annotations: map[string]string{corev1alpha1.OrgClusterAnnotationKey: org}},
		Spec: corev1alpha1.StoreSpec{CoreModule: fga.CoreModule},
	}}
}

// TestSharedStoreStep: every organization's Store names the one shared
// store, made once; a status.storeId naming anything else (another
// organization's store, one made for the Store) is replaced, and the
// model and managed tuples recorded for it are dropped.
func TestSharedStoreStep(t *testing.T) {
	f := newFGAStores()
	f.names["OWN"] = acmeStore
	step := &storeStep{shared: f.shared()}
	acme, victim := orgState("acme", "acmecl", "1"), orgState("victim", "victimcl", "2")
	acme.store.Status = corev1alpha1.StoreStatus{StoreID: "OWN", AuthorizationModelID: "M", ManagedTuples: []corev1alpha1.Tuple{{Object: "a:b", Relation: "r", User: "user:x"}}}
	for _, s := range []*state{acme, victim, acme} {
		if res := step.reconcile(context.Background(), s); !res.done {
			t.Fatalf("%s: step did not finish", s.store.Name)
		}
	}
	if f.made != 1 || f.names[acme.store.Status.StoreID] != SharedStoreName || victim.store.Status.StoreID != acme.store.Status.StoreID {
		t.Fatalf("made %d stores; acme on %q, victim on %q", f.made, acme.store.Status.StoreID, victim.store.Status.StoreID)
	}
	if acme.store.Status.AuthorizationModelID != "" || acme.store.Status.ManagedTuples != nil {
		t.Fatalf("the old store's model and tuples were kept: %+v", acme.store.Status)
	}
	// A restarted operator finds the shared store by its name.
	again := &storeStep{shared: f.shared()}
	s := orgState("other", "othercl", "3")
	if again.reconcile(context.Background(), s); f.made != 1 || s.store.Status.StoreID != acme.store.Status.StoreID {
		t.Fatalf("after a restart: %d stores made, other on %q", f.made, s.store.Status.StoreID)
	}
}

// TestSharedStoreName: OpenFGA takes the name (its CreateStore pattern),
// and no Store's own store can have it (a Store's name holds no '/').
func TestSharedStoreName(t *testing.T) {
	if !regexp.MustCompile(`^[a-zA-Z0-9\s\.\-\/^_&@]{3,64}$`).MatchString(SharedStoreName) {
		t.Errorf("OpenFGA refuses the store name %q", SharedStoreName)
	}
	if !strings.Contains(SharedStoreName, "/") {
		t.Errorf("%q could be a Store's own store's name", SharedStoreName)
	}
}

func composeResources(t *testing.T, rs ...fga.Resource) *openfgav1.AuthorizationModel {
	t.Helper()
	var modules []fga.Module
	for _, r := range rs {
		modules = append(modules, fga.Module{Name: "bound/" + r.ModuleName(), Contents: fga.ResourceModule(r)})
	}
	m, rejected, err := fga.ComposeSkipping(fga.Module{Name: fga.CoreModuleName, Contents: fga.CoreModule}, modules)
	if err != nil || len(rejected) > 0 {
		t.Fatalf("composing: %v %v", err, rejected)
	}
	return m
}

func hasType(m *openfgav1.AuthorizationModel, typ string) bool {
	for _, td := range m.GetTypeDefinitions() {
		if td.GetType() == typ {
			return true
		}
	}
	return false
}

// TestSharedModelGrows: the shared model is the union of the
// organizations' models, written only when it grows; a model that would
// redefine a relation is refused; after a restart the union grows from
// the store's model, dropping nothing.
func TestSharedModelGrows(t *testing.T) {
	orders := fga.Resource{Group: "orders.example.io", Plural: "orders", Singular: "order", Namespaced: true}
	invoices := fga.Resource{Group: "invoices.example.io", Plural: "invoices", Singular: "invoice"}
	f := newFGAStores()
	sh := f.shared()
	ctx := context.Background()
	first, err := sh.grow(ctx, composeResources(t, orders))
	if err != nil {
		t.Fatal(err)
	}
	if again, err := sh.grow(ctx, composeResources(t)); err != nil || again != first || len(f.models[sh.id]) != 1 {
		t.Fatalf("a model the shared one holds wrote %d models (id %q, err %v)", len(f.models[sh.id]), again, err)
	}
	restarted := f.shared()
	grown, err := restarted.grow(ctx, composeResources(t, invoices))
	if err != nil {
		t.Fatal(err)
	}
	latest := f.models[sh.id][len(f.models[sh.id])-1]
	if grown == first || !hasType(latest, orders.Type()) || !hasType(latest, invoices.Type()) {
		t.Fatalf("model %s after growing: orders %v, invoices %v", grown, hasType(latest, orders.Type()), hasType(latest, invoices.Type()))
	}
	// A model redefining a relation the shared one has.
	bad := composeResources(t, orders)
	for _, td := range bad.GetTypeDefinitions() {
		if td.GetType() == orders.Type() {
			for name := range td.GetRelations() {
				td.Relations[name] = &openfgav1.Userset{Userset: &openfgav1.Userset_This{This: &openfgav1.DirectUserset{}}}
			}
		}
	}
	n := len(f.models[sh.id])
	if _, err := restarted.grow(ctx, bad); !errors.Is(err, fga.ErrConflict) || len(f.models[sh.id]) != n {
		t.Fatalf("a redefining model: err %v, %d models written (had %d)", err, len(f.models[sh.id]), n)
	}
}

// TestSharedTuplesStayInTheOrganization (attack): in the shared store a
// Store's tuples may name only its organization (its Account and owner
// role in root:orgs, objects in its workspace); a tuple naming another
// organization's Account, owner role or workspace is not written and
// the Store says so, while its own tuples are.
func TestSharedTuplesStayInTheOrganization(t *testing.T) {
	own := []corev1alpha1.Tuple{
		{Object: fga.AccountObject("orgs1", "acme"), Relation: "member", User: "user:bob"},
		{Object: fga.TypeName("", "configmap") + ":acmecl/default/cm", Relation: "viewer", User: "user:bob"},
	}
	attacks := []corev1alpha1.Tuple{
		{Object: fga.AccountObject("orgs1", "victim"), Relation: "member", User: "user:mallory"},
		{Object: fga.OwnerRole("orgs1", "victim"), Relation: "assignee", User: "user:mallory"},
		{Object: fga.TypeName("", "configmap") + ":victimcl/default/cm", Relation: "viewer", User: "user:mallory"},
		{Object: fga.AccountObject("orgs1", "acme"), Relation: "member", User: fga.OwnerRole("orgs1", "victim") + "#assignee"},
	}
	f := newFGAStores()
	s := orgState("acme", "acmecl", "1")
	s.store.Status.StoreID = "SHARED"
	s.store.Spec.Tuples = append(append([]corev1alpha1.Tuple(nil), own...), attacks...)
	step := &tuplesStep{write: f.write, shared: true}
	if res := step.reconcile(context.Background(), s); res.done {
		t.Fatal("the step passed with tuples naming another organization")
	}
	if c := condition(t, s.store, corev1alpha1.ConditionTuplesWritten); c.Status != metav1.ConditionFalse || c.Reason != corev1alpha1.ReasonOtherOrganization {
		t.Fatalf("condition %+v", c)
	}
	for _, a := range attacks {
		if f.tuples["SHARED"][a] {
			t.Errorf("written into the shared store: %s", a)
		}
	}
	for _, o := range own {
		if !f.tuples["SHARED"][o] {
			t.Errorf("the organization's own tuple was not written: %s", o)
		}
	}
}

// TestSharedDeletionForgetsTheOrganization (attack): deleting an
// organization on the shared store deletes every tuple naming it, those
// it wrote and those written by others (its owner role, an account's
// parent tuple), so a founder taking the name again inherits nothing;
// the other organization's tuples and the store stay.
func TestSharedDeletionForgetsTheOrganization(t *testing.T) {
	f := newFGAStores()
	sh := f.shared()
	ctx := context.Background()
	id, _ := sh.storeID(ctx)
	acme := orgState("acme", "acmecl", "1")
	acme.store.Status.StoreID = id
	acmeTuples := append(fga.AccountTuples("orgs1", "acme", "alice", "", ""),
		corev1alpha1.Tuple{Object: fga.AccountObject("orgs1", "acme"), Relation: "member", User: "user:bob"},
		corev1alpha1.Tuple{Object: fga.AccountObject("acmecl", "team"), Relation: "parent", User: fga.AccountObject("orgs1", "acme")},
		corev1alpha1.Tuple{Object: fga.TypeName("", "configmap") + ":acmecl/default/cm", Relation: "viewer", User: "user:bob"})
	victimTuples := append(fga.AccountTuples("orgs1", "victim", "carol", "", ""),
		corev1alpha1.Tuple{Object: fga.AccountObject("orgs1", "victim"), Relation: "member", User: "user:bob"})
	_ = f.write(ctx, id, append(append([]corev1alpha1.Tuple(nil), acmeTuples...), victimTuples...), nil)
	acme.store.Status.ManagedTuples = acmeTuples[:1]
	var deleted []string
	step := &deletionStep{shared: sh, storeName: named(f.names), listStores: listNamed(f.names),
		readTuples: func(context.Context, string) ([]corev1alpha1.Tuple, error) { return nil, nil },
		write:      f.write,
		deleteStore: func(_ context.Context, id string) error {
			deleted = append(deleted, id)
			return nil
		}}
	if res := step.reconcile(ctx, acme); !res.done {
		t.Fatal("deletion did not finish")
	}
	if len(deleted) != 0 || f.names[id] != SharedStoreName {
		t.Fatalf("stores deleted: %v", deleted)
	}
	for _, tu := range acmeTuples {
		if f.tuples[id][tu] {
			t.Errorf("left in the shared store after the organization's deletion: %s", tu)
		}
	}
	for _, tu := range victimTuples {
		if !f.tuples[id][tu] {
			t.Errorf("another organization's tuple was deleted: %s", tu)
		}
	}
}
