package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
)

func newState() *state {
	return &state{cluster: "orgs1", path: "root:orgs", store: &corev1alpha1.Store{
		ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "0a1b2c3d-4e5f-6789-abcd-ef0123456789", Generation: 1,
			Annotations: map[string]string{corev1alpha1.OrgClusterAnnotationKey: "acmecl"}},
		Spec: corev1alpha1.StoreSpec{CoreModule: fga.CoreModule},
	}}
}

func condition(t *testing.T, st *corev1alpha1.Store, typ string) *metav1.Condition {
	t.Helper()
	c := meta.FindStatusCondition(st.Status.Conditions, typ)
	if c == nil {
		t.Fatalf("no condition %s in %v", typ, st.Status.Conditions)
	}
	return c
}

// named is an OpenFGA with the given stores (id -> name).
func named(stores map[string]string) func(context.Context, string) (string, bool, error) {
	return func(_ context.Context, id string) (string, bool, error) {
		name, ok := stores[id]
		return name, ok, nil
	}
}

func listNamed(stores map[string]string) func(context.Context, string) ([]string, error) {
	return func(_ context.Context, name string) ([]string, error) {
		var ids []string
		for id, n := range stores {
			if n == name {
				ids = append(ids, id)
			}
		}
		sort.Strings(ids)
		return ids, nil
	}
}

const (
	acmeStore   = "acme.0a1b2c3d4e5f6789abcdef0123456789"
	acmeLegacy  = "acme.0a1b2c3d4e5f"
	victimStore = "victim.99999999999999999999999999999999"
)

func TestStoreStep(t *testing.T) {
	t.Run("existing store", func(t *testing.T) {
		s := newState()
		s.store.Status.StoreID = "S1"
		step := &storeStep{storeName: named(map[string]string{"S1": acmeStore})}
		if res := step.reconcile(context.Background(), s); !res.done {
			t.Fatal("an existing store did not pass")
		}
	})
	t.Run("a store of the earlier name stays the Store's", func(t *testing.T) {
		s := newState()
		s.store.Status.StoreID = "S1"
		step := &storeStep{storeName: named(map[string]string{"S1": acmeLegacy})}
		if res := step.reconcile(context.Background(), s); !res.done || s.store.Status.StoreID != "S1" {
			t.Fatalf("a store named %s was not kept: %+v", acmeLegacy, s.store.Status)
		}
	})
	t.Run("a store found is not looked up again at every resync", func(t *testing.T) {
		s := newState()
		s.store.Status.StoreID = "S1"
		lookups := 0
		step := &storeStep{storeName: func(context.Context, string) (string, bool, error) { lookups++; return acmeStore, true, nil }}
		for range 3 {
			if res := step.reconcile(context.Background(), s); !res.done {
				t.Fatal("an existing store did not pass")
			}
		}
		if lookups != 1 {
			t.Fatalf("%d lookups of a store found a moment ago, want 1", lookups)
		}
		s.store.Status.StoreID = "S2"
		if step.reconcile(context.Background(), s); lookups != 2 {
			t.Fatalf("another store id was not looked up (%d lookups)", lookups)
		}
	})
	t.Run("store gone: a new one, model and tuples reset", func(t *testing.T) {
		s := newState()
		s.store.Status = corev1alpha1.StoreStatus{StoreID: "OLD", AuthorizationModelID: "M", ManagedTuples: []corev1alpha1.Tuple{{Object: "a:b", Relation: "r", User: "user:x"}}}
		var created string
		step := &storeStep{
			storeName:   named(nil),
			listStores:  listNamed(nil),
			createStore: func(_ context.Context, name string) (string, error) { created = name; return "NEW", nil },
		}
		if res := step.reconcile(context.Background(), s); !res.done {
			t.Fatal("step did not finish")
		}
		if created != acmeStore || s.store.Status.StoreID != "NEW" || s.store.Status.AuthorizationModelID != "" || s.store.Status.ManagedTuples != nil {
			t.Fatalf("created %q, status %+v", created, s.store.Status)
		}
	})
	t.Run("a store made for this Store is adopted", func(t *testing.T) {
		s := newState()
		step := &storeStep{
			listStores:  listNamed(map[string]string{"FOUND": acmeLegacy}),
			createStore: func(context.Context, string) (string, error) { t.Fatal("created a second store"); return "", nil },
		}
		step.reconcile(context.Background(), s)
		if s.store.Status.StoreID != "FOUND" {
			t.Fatalf("store id %q, want the existing one", s.store.Status.StoreID)
		}
	})
	t.Run("OpenFGA down", func(t *testing.T) {
		s := newState()
		step := &storeStep{
			listStores: func(context.Context, string) ([]string, error) { return nil, errors.New("connection refused") },
		}
		if res := step.reconcile(context.Background(), s); res.done || res.requeueAfter == 0 {
			t.Fatal("a failing OpenFGA did not stop and requeue")
		}
		if c := condition(t, s.store, corev1alpha1.ConditionStoreCreated); c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "connection refused") {
			t.Fatalf("condition %+v", c)
		}
	})
}

// TestStoreStepIgnoresAnotherStoresID: a status.storeId patched to the id
// of another organization's store (readable in its AccountInfo) is not
// used: the Store gets its own store, and the victim's is never written.
func TestStoreStepIgnoresAnotherStoresID(t *testing.T) {
	stores := map[string]string{"VICTIM": victimStore, "MINE": acmeStore}
	s := newState()
	s.store.Status = corev1alpha1.StoreStatus{StoreID: "VICTIM", AuthorizationModelID: "VM"}
	step := &storeStep{storeName: named(stores), listStores: listNamed(stores),
		createStore: func(context.Context, string) (string, error) {
			t.Fatal("created a store although its own exists")
			return "", nil
		}}
	if res := step.reconcile(context.Background(), s); !res.done {
		t.Fatalf("step did not finish: %v", s.store.Status.Conditions)
	}
	if s.store.Status.StoreID != "MINE" || s.store.Status.AuthorizationModelID != "" {
		t.Fatalf("status %+v: want the Store's own store MINE and no model yet", s.store.Status)
	}
	// Without a store of its own, a new one is made.
	s = newState()
	s.store.Status.StoreID = "VICTIM"
	step.listStores = listNamed(map[string]string{"VICTIM": victimStore})
	step.createStore = func(_ context.Context, name string) (string, error) { return "NEW:" + name, nil }
	step.reconcile(context.Background(), s)
	if s.store.Status.StoreID != "NEW:"+acmeStore {
		t.Fatalf("store id %q, want a new store of the Store's own", s.store.Status.StoreID)
	}
}

func TestOpenFGAName(t *testing.T) {
	st := &corev1alpha1.Store{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("o", 55), UID: "0a1b2c3d-4e5f-6789-abcd-ef0123456789"}}
	name := openFGAName(st)
	if len(name) != maxStoreName || !strings.HasSuffix(name, ".0a1b2c3d4e5f6789abcdef0123456789") {
		t.Fatalf("name %q (%d characters): want %d ending in the whole UID", name, len(name), maxStoreName)
	}
	if other := (&corev1alpha1.Store{ObjectMeta: metav1.ObjectMeta{Name: st.Name, UID: "0a1b2c3d-4e5f-0000-0000-000000000000"}}); ownsName(other, name) {
		t.Fatal("a Store whose UID shares the first 12 hex digits owns the store")
	}
	if ownsName(&corev1alpha1.Store{ObjectMeta: metav1.ObjectMeta{Name: "acme"}}, "acme.") {
		t.Fatal("a Store without UID owns a store")
	}
}

func am(name, cluster, ref, model string, created int64) corev1alpha1.AuthorizationModel {
	return corev1alpha1.AuthorizationModel{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{ClusterAnnotation: cluster},
			CreationTimestamp: metav1.Unix(created, 0)},
		Spec: corev1alpha1.AuthorizationModelSpec{StoreRef: corev1alpha1.WorkspaceStoreRef{Name: "acme", Cluster: ref}, Model: model},
	}
}

func TestModelStep(t *testing.T) {
	widget := fga.ResourceModule(fga.Resource{Group: "example.com", Plural: "widgets", Singular: "widget"})
	copyOf := "module copy\n\ntype example_com_widget\n"
	// widgets is the organization's own (in its workspace), copy the
	// platform's (in root:orgs, next to the Store), takeover another
	// organization's naming this Store.
	takeover := am("takeover", "bobcl", "root:orgs", "module takeover\n\ntype bob_was_here\n", 10)
	takeover.Spec.Tuples = []corev1alpha1.Tuple{{Object: "core_platform-mesh_io_account:orgs1/acme", Relation: "owner", User: "user:bob"}}
	models := []corev1alpha1.AuthorizationModel{
		am("copy", "orgs1", "root:orgs", copyOf, 200),
		am("widgets", "acmecl", "orgs1", widget, 100),
		am("other-store", "p1", "elsewhere", widget, 50),
		takeover,
	}
	var written *openfgav1.AuthorizationModel
	statuses := map[string]metav1.ConditionStatus{}
	reasons := map[string]string{}
	step := &modelStep{
		listModels: func(_ context.Context, keep func(*corev1alpha1.AuthorizationModel) bool) ([]corev1alpha1.AuthorizationModel, error) {
			return copyModels(models, keep), nil
		},
		boundResources: func(context.Context, *state) ([]fga.Resource, error) {
			return []fga.Resource{{Group: "db.example.io", Plural: "databases", Singular: "database", Namespaced: true}}, nil
		},
		writeModel: func(_ context.Context, storeID, current string, m *openfgav1.AuthorizationModel) (string, bool, error) {
			written = m
			return "M2", true, nil
		},
		updateModel: func(_ context.Context, cluster string, m *corev1alpha1.AuthorizationModel) error {
			c := meta.FindStatusCondition(m.Status.Conditions, corev1alpha1.ConditionReady)
			statuses[m.Name], reasons[m.Name] = c.Status, c.Reason
			return nil
		},
	}
	s := newState()
	s.store.Status.StoreID = "S1"
	if res := step.reconcile(context.Background(), s); !res.done {
		t.Fatalf("model step stopped: %v", s.store.Status.Conditions)
	}
	if s.store.Status.AuthorizationModelID != "M2" {
		t.Fatalf("model id %q", s.store.Status.AuthorizationModelID)
	}
	types := map[string]bool{}
	for _, td := range written.GetTypeDefinitions() {
		types[td.GetType()] = true
	}
	if !types["example_com_widget"] || !types["db_example_io_database"] {
		t.Fatalf("written model lacks the module's or the bound resource's type: %v", types)
	}
	if statuses["widgets"] != metav1.ConditionTrue || statuses["copy"] != metav1.ConditionFalse {
		t.Fatalf("AuthorizationModel conditions %v: the older module keeps its type, the copy is refused", statuses)
	}
	if _, touched := statuses["other-store"]; touched {
		t.Fatal("a model of another store was touched")
	}
	if types["bob_was_here"] || statuses["takeover"] != metav1.ConditionFalse || reasons["takeover"] != corev1alpha1.ReasonOtherOrganization {
		t.Fatalf("another organization's model naming the Store: in the model %v, Ready=%s %s; want it left out as OtherOrganization",
			types["bob_was_here"], statuses["takeover"], reasons["takeover"])
	}
	if len(s.models) != 1 || s.models[0].Name != "widgets" {
		t.Fatalf("models in the store: %v", s.models)
	}

	t.Run("bad core module", func(t *testing.T) {
		s := newState()
		s.store.Spec.CoreModule = "module core\n\ntype"
		if res := step.reconcile(context.Background(), s); res.done {
			t.Fatal("a broken core module passed")
		}
		if c := condition(t, s.store, corev1alpha1.ConditionModelWritten); c.Reason != corev1alpha1.ReasonInvalidModel {
			t.Fatalf("condition %+v", c)
		}
	})
}

func TestTuplesStep(t *testing.T) {
	a := corev1alpha1.Tuple{Object: "core_platform-mesh_io_account:c/acme", Relation: "member", User: "user:bob"}
	b := corev1alpha1.Tuple{Object: "core_platform-mesh_io_account:c/acme", Relation: "member", User: "user:carol"}
	fromModel := corev1alpha1.Tuple{Object: "role:x", Relation: "assignee", User: "user:dave"}
	s := newState()
	s.store.Status.StoreID = "S1"
	s.store.Spec.Tuples = []corev1alpha1.Tuple{a}
	s.store.Status.ManagedTuples = []corev1alpha1.Tuple{b}
	s.models = []*corev1alpha1.AuthorizationModel{{Spec: corev1alpha1.AuthorizationModelSpec{Tuples: []corev1alpha1.Tuple{fromModel}}}}
	var added, removed []corev1alpha1.Tuple
	var modelStatus []corev1alpha1.Tuple
	step := &tuplesStep{write: func(_ context.Context, _ string, add, remove []corev1alpha1.Tuple) error {
		added, removed = add, remove
		return nil
	}, updateModel: func(_ context.Context, _ string, m *corev1alpha1.AuthorizationModel) error {
		modelStatus = m.Status.ManagedTuples
		return nil
	}}
	if res := step.reconcile(context.Background(), s); !res.done {
		t.Fatal("tuples step stopped")
	}
	if len(modelStatus) != 1 || modelStatus[0] != fromModel {
		t.Fatalf("the AuthorizationModel's managedTuples = %v, want its tuple", modelStatus)
	}
	if len(added) != 2 || len(removed) != 1 || removed[0] != b {
		t.Fatalf("added %v removed %v, want a and the model's tuple added, b removed", added, removed)
	}
	if len(s.store.Status.ManagedTuples) != 2 {
		t.Fatalf("managed tuples %v", s.store.Status.ManagedTuples)
	}
	// Nothing changed: no call.
	step.write = func(context.Context, string, []corev1alpha1.Tuple, []corev1alpha1.Tuple) error {
		t.Fatal("wrote although nothing changed")
		return nil
	}
	step.reconcile(context.Background(), s)

	// OpenFGA failing: managed tuples stay as they were.
	s.store.Spec.Tuples = nil
	step.write = func(context.Context, string, []corev1alpha1.Tuple, []corev1alpha1.Tuple) error {
		return errors.New("boom")
	}
	before := append([]corev1alpha1.Tuple(nil), s.store.Status.ManagedTuples...)
	if res := step.reconcile(context.Background(), s); res.done {
		t.Fatal("a failed write passed")
	}
	if len(s.store.Status.ManagedTuples) != len(before) {
		t.Fatal("managed tuples changed although the write failed")
	}
}

// TestDeletionStep: the Store's stores lose every tuple before they are
// deleted (OpenFGA's delete is soft), and a store status.storeId names
// that was not made for the Store is neither revoked nor deleted.
func TestDeletionStep(t *testing.T) {
	stores := map[string]string{"S1": acmeStore, "S0": acmeLegacy, "VICTIM": victimStore}
	tuples := map[string][]corev1alpha1.Tuple{
		"S1":     {{Object: "core_platform-mesh_io_account:c/acme", Relation: "owner", User: "user:alice"}},
		"VICTIM": {{Object: "core_platform-mesh_io_account:c/victim", Relation: "owner", User: "user:carol"}},
	}
	var calls []string
	step := &deletionStep{
		storeName:  named(stores),
		listStores: listNamed(stores),
		readTuples: func(_ context.Context, id string) ([]corev1alpha1.Tuple, error) { return tuples[id], nil },
		write: func(_ context.Context, id string, add, remove []corev1alpha1.Tuple) error {
			calls = append(calls, fmt.Sprintf("revoke %s %d", id, len(remove)))
			return nil
		},
		deleteStore: func(_ context.Context, id string) error { calls = append(calls, "delete "+id); return nil },
	}
	s := newState()
	s.store.Status.StoreID = "S1"
	if res := step.reconcile(context.Background(), s); !res.done || strings.Join(calls, ",") != "revoke S1 1,delete S1,delete S0" {
		t.Fatalf("done=%v calls %v, want S1 revoked then deleted, then S0 deleted", res.done, calls)
	}
	calls = nil
	s = newState()
	s.store.Status.StoreID = "VICTIM"
	step.listStores = listNamed(nil)
	if res := step.reconcile(context.Background(), s); !res.done || len(calls) != 0 {
		t.Fatalf("done=%v calls %v: another Store's store was touched", res.done, calls)
	}
	// A store that never got an id, and OpenFGA failing: deletion waits
	// until it can tell nothing is left to revoke.
	s = newState()
	step.listStores = func(context.Context, string) ([]string, error) { return nil, errors.New("down") }
	if res := step.reconcile(context.Background(), s); res.done {
		t.Fatal("deletion went on without knowing whether a store is left")
	}
}

// TestModelStepComposesOnlyWhenChanged: a Store looked at again with the
// same modules, and still on the model written for them, is neither
// composed nor written again; a changed module, a store whose model id is
// not the one written, or a new OpenFGA store are.
func TestModelStepComposesOnlyWhenChanged(t *testing.T) {
	widget := fga.ResourceModule(fga.Resource{Group: "example.com", Plural: "widgets", Singular: "widget"})
	gadget := fga.ResourceModule(fga.Resource{Group: "example.com", Plural: "gadgets", Singular: "gadget"})
	models := []corev1alpha1.AuthorizationModel{am("widgets", "acmecl", "orgs1", widget, 100)}
	writes := 0
	step := &modelStep{
		listModels: func(_ context.Context, keep func(*corev1alpha1.AuthorizationModel) bool) ([]corev1alpha1.AuthorizationModel, error) {
			return copyModels(models, keep), nil
		},
		writeModel: func(_ context.Context, storeID, current string, m *openfgav1.AuthorizationModel) (string, bool, error) {
			writes++
			return fmt.Sprintf("M%d", writes), true, nil
		},
		updateModel: func(context.Context, string, *corev1alpha1.AuthorizationModel) error { return nil },
	}
	s := newState()
	s.store.Status.StoreID = "S1"
	run := func(want int, what string) {
		t.Helper()
		if res := step.reconcile(context.Background(), s); !res.done {
			t.Fatalf("%s: model step stopped: %v", what, s.store.Status.Conditions)
		}
		if writes != want {
			t.Fatalf("%s: %d model writes, want %d", what, writes, want)
		}
		if s.store.Status.AuthorizationModelID != fmt.Sprintf("M%d", writes) {
			t.Fatalf("%s: model id %q after %d writes", what, s.store.Status.AuthorizationModelID, writes)
		}
		if len(s.models) != 1 || s.models[0].Name != "widgets" {
			t.Fatalf("%s: models in the store: %v", what, s.models)
		}
	}
	run(1, "first")
	run(1, "unchanged")
	models[0].Spec.Model = gadget
	run(2, "module changed")
	run(2, "unchanged again")
	s.store.Status.AuthorizationModelID = ""
	run(3, "model id reset")
	s.store.Status.StoreID = "S2"
	run(4, "new OpenFGA store")
	step.forget(s)
	run(5, "after the Store was deleted")
}

// TestModelListCopiesWhatIsKept: a shared list hands a reconcile copies of
// the models it keeps only, and a change to one leaves the list as it was.
func TestModelListCopiesWhatIsKept(t *testing.T) {
	l := &modelList{items: []corev1alpha1.AuthorizationModel{
		am("mine", "p1", "orgs1", "module mine", 100),
		am("theirs", "p2", "elsewhere", "module theirs", 100),
	}, at: time.Now()}
	mine := func(m *corev1alpha1.AuthorizationModel) bool { return m.Spec.StoreRef.Cluster == "orgs1" }
	got, err := l.list(context.Background(), mine)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "mine" {
		t.Fatalf("listed %v, want only mine", got)
	}
	got[0].Annotations[ClusterAnnotation] = "changed"
	if l.items[0].Annotations[ClusterAnnotation] != "p1" {
		t.Fatal("changing a listed model changed the shared list")
	}
	if none, _ := l.list(context.Background(), func(*corev1alpha1.AuthorizationModel) bool { return false }); len(none) != 0 {
		t.Fatalf("nothing kept, listed %v", none)
	}
}

// Stores with the same core module and modules share one composed model
// (composed once, also when reconciled at once); other inputs get their
// own, and only the latest maxCompositions are kept.
func TestCompositionsShared(t *testing.T) {
	var c compositions
	widget := []fga.Module{{Name: "widgets", Contents: fga.ResourceModule(fga.Resource{Group: "example.com", Plural: "widgets", Singular: "widget"})}}
	inputs := modelInputs(fga.CoreModule, widget)
	models := make(chan *openfgav1.AuthorizationModel, 4)
	for range cap(models) {
		go func() {
			m, rejected, err := c.compose(inputs, fga.CoreModule, widget)
			if err != nil || len(rejected) != 0 {
				t.Errorf("composing: %v %v", err, rejected)
			}
			models <- m
		}()
	}
	first := <-models
	for range cap(models) - 1 {
		if m := <-models; m != first {
			t.Fatal("Stores with the same inputs got models composed separately")
		}
	}
	if first == nil || len(first.GetTypeDefinitions()) == 0 {
		t.Fatalf("composed model %v", first)
	}
	bare, _, err := c.compose(modelInputs(fga.CoreModule, nil), fga.CoreModule, nil)
	if err != nil || bare == first || len(bare.GetTypeDefinitions()) != len(first.GetTypeDefinitions())-1 {
		t.Fatalf("the core module alone: %d types (with widgets %d), err %v", len(bare.GetTypeDefinitions()), len(first.GetTypeDefinitions()), err)
	}
	for i := range maxCompositions {
		extra := []fga.Module{{Name: fmt.Sprintf("m%d", i), Contents: fmt.Sprintf("module m%d\n\ntype t%d\n", i, i)}}
		if _, _, err := c.compose(modelInputs(fga.CoreModule, extra), fga.CoreModule, extra); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.entries) != maxCompositions || len(c.order) != maxCompositions {
		t.Fatalf("%d compositions kept (%d in order), want %d", len(c.entries), len(c.order), maxCompositions)
	}
	if again, _, _ := c.compose(inputs, fga.CoreModule, widget); again == first {
		t.Fatal("the oldest composition was kept beyond maxCompositions")
	}
}

// failingStep fails the test when run.
type failingStep struct{ t *testing.T }

func (f failingStep) reconcile(context.Context, *state) result {
	f.t.Fatal("a step ran for a Store outside the organizations' workspace")
	return next
}

// TestStoreOutsideOrgsIsLeftAlone: a Store a tenant makes in a workspace of
// their own gets no OpenFGA store, no finalizer and no write of any kind,
// only Ready=False saying why; the same Store in root:orgs is reconciled.
func TestStoreOutsideOrgsIsLeftAlone(t *testing.T) {
	var status *corev1alpha1.Store
	updated := false
	r := &reconciler{
		steps: []step{failingStep{t}},
		getStore: func(_ context.Context, cluster, name string) (*corev1alpha1.Store, error) {
			st := newState().store
			st.Status.StoreID = "VICTIM"
			return st, nil
		},
		updateStore:  func(context.Context, string, *corev1alpha1.Store) error { updated = true; return nil },
		updateStatus: func(_ context.Context, _ string, st *corev1alpha1.Store) error { status = st; return nil },
		pathOf:       func(string) (string, bool) { return "", false },
		clusterOf:    func(string) (string, bool) { return "", false },
		orgsCluster:  func(context.Context) (string, error) { return "orgs1", nil },
	}
	if _, err := r.reconcile(context.Background(), "bobcl", "acme"); err != nil {
		t.Fatal(err)
	}
	if updated || status == nil {
		t.Fatalf("finalizer written %v, status written %v", updated, status != nil)
	}
	if c := condition(t, status, corev1alpha1.ConditionReady); c.Status != metav1.ConditionFalse || c.Reason != corev1alpha1.ReasonNotOrganizationStore {
		t.Fatalf("Ready %+v, want False NotOrganizationStore", c)
	}

	ran := false
	r.steps = []step{stepFunc(func() { ran = true })}
	if _, err := r.reconcile(context.Background(), "orgs1", "acme"); err != nil {
		t.Fatal(err)
	}
	if !ran || !updated {
		t.Fatalf("a Store in root:orgs: steps ran %v, finalizer written %v", ran, updated)
	}
}

type stepFunc func()

func (f stepFunc) reconcile(context.Context, *state) result { f(); return next }

// TestStoreChangedPassesStoreID: a status-only update is skipped unless it
// changes status.storeId, which is looked at again at once.
func TestStoreChangedPassesStoreID(t *testing.T) {
	old := newState().store
	old.Finalizers = []string{Finalizer}
	old.Status.StoreID = "MINE"
	conds := old.DeepCopy()
	conds.Status.Conditions = []metav1.Condition{{Type: corev1alpha1.ConditionReady, Status: metav1.ConditionTrue}}
	if storeChanged.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: conds}) {
		t.Fatal("a conditions-only update passed")
	}
	moved := old.DeepCopy()
	moved.Status.StoreID = "VICTIM"
	if !storeChanged.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: moved}) {
		t.Fatal("a changed status.storeId did not pass")
	}
}
