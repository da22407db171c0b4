package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
	"github.com/meshplane/meshplane/operators/fgaclient"
	"github.com/meshplane/meshplane/sdk/keyfile"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// fgaFor returns a client of the platform's OpenFGA.
func fgaFor(t *testing.T) *fgaclient.Client {
	t.Helper()
	url := os.Getenv("OPENFGA_URL")
	if sec.fga != nil {
		url = sec.fga.URL
	}
	if url == "" {
		t.Skip("no OpenFGA URL (external platform without OPENFGA_URL)")
	}
	var opts []fgaclient.Option
	if keyFile := os.Getenv("OPENFGA_PRESHARED_KEY_FILE"); sec.fga == nil && keyFile != "" {
		// An external platform's OpenFGA takes only its preshared key.
		key, err := keyfile.Read(keyFile)
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, fgaclient.WithPresharedKey(key))
	}
	c, err := fgaclient.New(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// adminClient is kcp-admin's client in a workspace.
func adminClient(t *testing.T, s *framework.Server, path string) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(s.KCPAdminRESTConfig(t, path), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// waitStore waits until the Store is Ready and returns it.
func waitStore(t *testing.T, c client.Client, name string) *corev1alpha1.Store {
	t.Helper()
	st := &corev1alpha1.Store{}
	framework.Eventually(t, readyTimeout, 500*time.Millisecond, "Store "+name+" to be Ready", func() (bool, string) {
		if err := c.Get(ctxFor(t), client.ObjectKey{Name: name}, st); err != nil {
			return false, err.Error()
		}
		return meta.IsStatusConditionTrue(st.Status.Conditions, corev1alpha1.ConditionReady) && st.Status.StoreID != "" && st.Status.AuthorizationModelID != "",
			framework.Compact(st.Status)
	})
	return st
}

func hasType(m *openfgav1.AuthorizationModel, name string) bool {
	for _, td := range m.GetTypeDefinitions() {
		if td.GetType() == name {
			return true
		}
	}
	return false
}

// checkEventually waits until OpenFGA answers want for the tuple (checked
// without OpenFGA's caches).
func checkEventually(t *testing.T, f *fgaclient.Client, storeID string, tu corev1alpha1.Tuple, want bool) {
	t.Helper()
	framework.Eventually(t, readyTimeout, 250*time.Millisecond, fmt.Sprintf("OpenFGA check %s to be %v", tu, want), func() (bool, string) {
		got, err := f.Check(ctxFor(t), storeID, tu)
		if err != nil {
			return false, err.Error()
		}
		return got == want, fmt.Sprintf("allowed=%v", got)
	})
}

func accountInfoOf(t *testing.T, s *framework.Server, path string) *corev1alpha1.AccountInfo {
	t.Helper()
	info := &corev1alpha1.AccountInfo{}
	if err := adminClient(t, s, path).Get(ctxFor(t), client.ObjectKey{Name: corev1alpha1.AccountInfoName}, info); err != nil {
		t.Fatalf("AccountInfo of %s: %v", path, err)
	}
	return info
}

// TestOrganizationStoreLifecycle: alice founds an organization; it gets a
// Store in root:orgs whose OpenFGA store holds the model and makes alice
// owner; its accounts get owner and parent tuples; Store.spec.tuples grant
// and revoke; deleting the account removes its tuples, deleting the org
// its store.
func TestOrganizationStoreLifecycle(t *testing.T) {
	s := platform(t)
	f := fgaFor(t)
	orgs := adminClient(t, s, "root:orgs")

	s.KubectlAsUser(t, "alice", "root:orgs").RunStdin(t, accountYAML("secorg", "org", "alice"), "create", "-f", "-")
	waitAccountReady(t, s.KubectlAsUser(t, "alice", "root:orgs"), "secorg")
	st := waitStore(t, orgs, "secorg")
	storeID := st.Status.StoreID

	info := accountInfoOf(t, s, "root:orgs:secorg")
	if info.Spec.FGA.Store.ID != storeID {
		t.Fatalf("AccountInfo of secorg has store id %q, want the Store's %q", info.Spec.FGA.Store.ID, storeID)
	}
	model, err := f.Model(ctxFor(t), storeID, st.Status.AuthorizationModelID)
	if err != nil || model == nil {
		t.Fatalf("model %s of store %s: %v", st.Status.AuthorizationModelID, storeID, err)
	}
	for _, typ := range []string{fga.AccountType, fga.NamespaceType, "core_configmap", "core_secret", fga.RoleType} {
		if !hasType(model, typ) {
			t.Errorf("the store's model has no type %s", typ)
		}
	}
	org := fga.AccountObject(info.Spec.Account.OriginClusterID, "secorg")
	checkEventually(t, f, storeID, corev1alpha1.Tuple{Object: org, Relation: "owner", User: "user:alice"}, true)
	checkEventually(t, f, storeID, corev1alpha1.Tuple{Object: org, Relation: "member", User: "user:bob"}, false)

	// An account in the organization: alice owns it, its parent is the org.
	inOrg := s.KubectlAsUser(t, "alice", "root:orgs:secorg")
	inOrg.RunStdin(t, accountYAML("team", "account", "alice"), "create", "-f", "-")
	waitAccountReady(t, inOrg, "team")
	teamInfo := accountInfoOf(t, s, "root:orgs:secorg:team")
	if teamInfo.Spec.FGA.Store.ID != storeID {
		t.Fatalf("AccountInfo of team has store id %q, want the org's %q", teamInfo.Spec.FGA.Store.ID, storeID)
	}
	team := fga.AccountObject(teamInfo.Spec.Account.OriginClusterID, "team")
	tuples, err := f.Read(ctxFor(t), storeID, team)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(tuples, corev1alpha1.Tuple{Object: team, Relation: "parent", User: org}) {
		t.Fatalf("tuples of %s: %v, want its parent %s", team, tuples, org)
	}
	checkEventually(t, f, storeID, corev1alpha1.Tuple{Object: team, Relation: "create_core_namespaces", User: "user:alice"}, true)

	// Store.spec.tuples: bob becomes a member of team, then stops being one.
	bob := corev1alpha1.Tuple{Object: team, Relation: "member", User: fga.UserID("bob")}
	setTuples := func(ts []corev1alpha1.Tuple) {
		t.Helper()
		framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "Store secorg's tuples to be updated", func() (bool, string) {
			cur := &corev1alpha1.Store{}
			if err := orgs.Get(ctxFor(t), client.ObjectKey{Name: "secorg"}, cur); err != nil {
				return false, err.Error()
			}
			keep := cur.Spec.Tuples[:0:0]
			for _, tu := range cur.Spec.Tuples {
				if tu != bob {
					keep = append(keep, tu)
				}
			}
			cur.Spec.Tuples = append(keep, ts...)
			if err := orgs.Update(ctxFor(t), cur); err != nil {
				return false, err.Error()
			}
			return true, ""
		})
	}
	setTuples([]corev1alpha1.Tuple{bob})
	checkEventually(t, f, storeID, corev1alpha1.Tuple{Object: team, Relation: "get", User: "user:bob"}, true)
	checkEventually(t, f, storeID, corev1alpha1.Tuple{Object: team, Relation: "list_core_namespaces", User: "user:bob"}, true)
	checkEventually(t, f, storeID, corev1alpha1.Tuple{Object: team, Relation: "create_core_namespaces", User: "user:bob"}, false)
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "the grant in status.managedTuples", func() (bool, string) {
		cur := &corev1alpha1.Store{}
		if err := orgs.Get(ctxFor(t), client.ObjectKey{Name: "secorg"}, cur); err != nil {
			return false, err.Error()
		}
		return slices.Contains(cur.Status.ManagedTuples, bob), framework.Compact(cur.Status.ManagedTuples)
	})
	setTuples(nil)
	checkEventually(t, f, storeID, corev1alpha1.Tuple{Object: team, Relation: "get", User: "user:bob"}, false)
	// The creator's tuples written by the initializer stay.
	checkEventually(t, f, storeID, corev1alpha1.Tuple{Object: org, Relation: "owner", User: "user:alice"}, true)

	// Deleting the account removes its tuples.
	inOrg.Run(t, "delete", "account", "team", "--wait=false")
	framework.Eventually(t, readyTimeout, 500*time.Millisecond, "the tuples of account team to be deleted", func() (bool, string) {
		var left []corev1alpha1.Tuple
		for _, obj := range []string{team, fga.OwnerRole(teamInfo.Spec.Account.OriginClusterID, "team")} {
			ts, err := f.Read(ctxFor(t), storeID, obj)
			if err != nil {
				return false, err.Error()
			}
			left = append(left, ts...)
		}
		return len(left) == 0, fmt.Sprint(left)
	})
	checkEventually(t, f, storeID, corev1alpha1.Tuple{Object: team, Relation: "get", User: "user:alice"}, false)

	// Deleting the organization removes its Store and its OpenFGA store.
	s.KubectlFor("root:orgs").Run(t, "delete", "account", "secorg", "--wait=false")
	framework.Eventually(t, readyTimeout, 500*time.Millisecond, "Store secorg to be gone", func() (bool, string) {
		err := orgs.Get(ctxFor(t), client.ObjectKey{Name: "secorg"}, &corev1alpha1.Store{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	framework.Eventually(t, readyTimeout, 500*time.Millisecond, "OpenFGA store "+storeID+" to be deleted", func() (bool, string) {
		stores, err := f.ListStores(ctxFor(t))
		if err != nil {
			return false, err.Error()
		}
		for _, st := range stores {
			if st.ID == storeID {
				return false, "still listed: " + st.Name
			}
		}
		return true, ""
	})
}

func authorizationModel(name, store, cluster, model string) *corev1alpha1.AuthorizationModel {
	return &corev1alpha1.AuthorizationModel{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1alpha1.AuthorizationModelSpec{
			StoreRef: corev1alpha1.WorkspaceStoreRef{Name: store, Cluster: cluster},
			Model:    model,
		},
	}
}

func waitModelCondition(t *testing.T, c client.Client, name string, status metav1.ConditionStatus) *metav1.Condition {
	t.Helper()
	var cond *metav1.Condition
	framework.Eventually(t, readyTimeout, 500*time.Millisecond, "AuthorizationModel "+name+" to be Ready="+string(status), func() (bool, string) {
		m := &corev1alpha1.AuthorizationModel{}
		if err := c.Get(ctxFor(t), client.ObjectKey{Name: name}, m); err != nil {
			return false, err.Error()
		}
		cond = meta.FindStatusCondition(m.Status.Conditions, corev1alpha1.ConditionReady)
		return cond != nil && cond.Status == status, framework.Compact(m.Status)
	})
	return cond
}

// TestAuthorizationModels: modules of AuthorizationModels join the store's
// model; one that defines a type another already defines, or does not
// parse, is refused on its own condition and the store keeps working with
// the rest (Platform Mesh breaks the whole store then).
func TestAuthorizationModels(t *testing.T) {
	s := platform(t)
	f := fgaFor(t)
	orgs := adminClient(t, s, "root:orgs")
	s.KubectlAsUser(t, "alice", "root:orgs").RunStdin(t, accountYAML("modelorg", "org", "alice"), "create", "-f", "-")
	waitAccountReady(t, s.KubectlAsUser(t, "alice", "root:orgs"), "modelorg")
	waitStore(t, orgs, "modelorg")
	t.Cleanup(func() { s.KubectlFor("root:orgs").Run(t, "delete", "account", "modelorg", "--wait=false") })

	widget := fga.Resource{Group: "example.com", Plural: "widgets", Singular: "widget", Namespaced: true}
	gadget := fga.Resource{Group: "example.com", Plural: "gadgets", Singular: "gadget"}
	create := func(m *corev1alpha1.AuthorizationModel) {
		t.Helper()
		if err := orgs.Create(ctxFor(t), m); err != nil {
			t.Fatalf("creating AuthorizationModel %s: %v", m.Name, err)
		}
		t.Cleanup(func() { _ = orgs.Delete(context.Background(), m) })
	}
	create(authorizationModel("widgets-modelorg", "modelorg", "root:orgs", fga.ResourceModule(widget)))
	waitModelCondition(t, orgs, "widgets-modelorg", metav1.ConditionTrue)
	// Modules apply oldest first, ties broken by name: the copy comes later.
	create(authorizationModel("widgets-xcopy-modelorg", "modelorg", "root:orgs",
		"module copy\n\ntype example_com_widget\n  relations\n    define owner: [user]\n"))
	create(authorizationModel("broken-modelorg", "modelorg", "root:orgs", "module broken\n\ntype\n"))
	gadgets := authorizationModel("gadgets-modelorg", "modelorg", "root:orgs", fga.ResourceModule(gadget))
	carol := corev1alpha1.Tuple{Object: fga.ObjectID(gadget.Type(), "somewhere", "", "g1"), Relation: "owner", User: fga.UserID("carol")}
	gadgets.Spec.Tuples = []corev1alpha1.Tuple{carol}
	create(gadgets)

	dup := waitModelCondition(t, orgs, "widgets-xcopy-modelorg", metav1.ConditionFalse)
	if dup.Reason != corev1alpha1.ReasonInvalidModel || !strings.Contains(dup.Message, "type example_com_widget is already defined") {
		t.Errorf("duplicate type condition = %s: %s, want InvalidModel naming the type", dup.Reason, dup.Message)
	}
	if c := waitModelCondition(t, orgs, "broken-modelorg", metav1.ConditionFalse); c.Reason != corev1alpha1.ReasonInvalidModel {
		t.Errorf("broken module condition = %s: %s", c.Reason, c.Message)
	}
	waitModelCondition(t, orgs, "gadgets-modelorg", metav1.ConditionTrue)
	waitModelCondition(t, orgs, "widgets-modelorg", metav1.ConditionTrue)

	var model *openfgav1.AuthorizationModel
	framework.Eventually(t, readyTimeout, 500*time.Millisecond, "the store's model to hold widgets and gadgets", func() (bool, string) {
		st := waitStore(t, orgs, "modelorg")
		m, err := f.Model(ctxFor(t), st.Status.StoreID, st.Status.AuthorizationModelID)
		if err != nil || m == nil {
			return false, fmt.Sprint(err)
		}
		model = m
		return hasType(m, "example_com_widget") && hasType(m, "example_com_gadget"), fmt.Sprintf("%d types", len(m.GetTypeDefinitions()))
	})
	// The gadgets' tuple is written and listed on its AuthorizationModel.
	st := waitStore(t, orgs, "modelorg")
	checkEventually(t, f, st.Status.StoreID, carol, true)
	framework.Eventually(t, readyTimeout, 500*time.Millisecond, "gadgets-modelorg to list its tuple", func() (bool, string) {
		m := &corev1alpha1.AuthorizationModel{}
		if err := orgs.Get(ctxFor(t), client.ObjectKey{Name: "gadgets-modelorg"}, m); err != nil {
			return false, err.Error()
		}
		return slices.Contains(m.Status.ManagedTuples, carol), framework.Compact(m.Status.ManagedTuples)
	})
	// The widget type is the first module's (member inherits from parent),
	// not the copy's.
	if _, ok := typeRelations(model, "example_com_widget")["member"]; !ok {
		t.Fatal("example_com_widget is the copy's, not the first module's")
	}
}

func typeRelations(m *openfgav1.AuthorizationModel, typ string) map[string]*openfgav1.Userset {
	for _, td := range m.GetTypeDefinitions() {
		if td.GetType() == typ {
			return td.GetRelations()
		}
	}
	return nil
}

// TestTwoHundredBoundResourceTypes: an organization whose model has 200
// resource types besides the core (OpenFGA's default limit is 100 types
// and 256 KiB) gets it written.
func TestTwoHundredBoundResourceTypes(t *testing.T) {
	s := platform(t)
	f := fgaFor(t)
	orgs := adminClient(t, s, "root:orgs")
	s.KubectlAsUser(t, "alice", "root:orgs").RunStdin(t, accountYAML("bigorg", "org", "alice"), "create", "-f", "-")
	waitAccountReady(t, s.KubectlAsUser(t, "alice", "root:orgs"), "bigorg")
	waitStore(t, orgs, "bigorg")
	t.Cleanup(func() { s.KubectlFor("root:orgs").Run(t, "delete", "account", "bigorg", "--wait=false") })

	const n = 200
	for i := 0; i < n; i++ {
		r := fga.Resource{Group: fmt.Sprintf("p%03d.example.io", i), Plural: "things", Singular: "thing", Namespaced: i%2 == 0}
		m := authorizationModel(fmt.Sprintf("things-%03d-bigorg", i), "bigorg", "root:orgs", fga.ResourceModule(r))
		if err := orgs.Create(ctxFor(t), m); err != nil {
			t.Fatalf("creating AuthorizationModel %s: %v", m.Name, err)
		}
		t.Cleanup(func() { _ = orgs.Delete(context.Background(), m) })
	}
	want := 4 + len(fga.BuiltinResources) + n // user, role, group, account
	framework.Eventually(t, 3*time.Minute, time.Second, fmt.Sprintf("the model of bigorg to have %d types", want), func() (bool, string) {
		st := &corev1alpha1.Store{}
		if err := orgs.Get(ctxFor(t), client.ObjectKey{Name: "bigorg"}, st); err != nil {
			return false, err.Error()
		}
		m, err := f.Model(ctxFor(t), st.Status.StoreID, st.Status.AuthorizationModelID)
		if err != nil || m == nil {
			return false, fmt.Sprint(err)
		}
		return len(m.GetTypeDefinitions()) == want, fmt.Sprintf("%d types; store status %s", len(m.GetTypeDefinitions()), framework.Compact(st.Status.Conditions))
	})
	waitModelCondition(t, orgs, fmt.Sprintf("things-%03d-bigorg", n-1), metav1.ConditionTrue)
}

const gadgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.fga.example.dev
spec:
  group: fga.example.dev
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// TestBoundAPIJoinsModel: an API bound into an organization's workspace
// gets its generated module in the organization's model.
func TestBoundAPIJoinsModel(t *testing.T) {
	s := platform(t)
	f := fgaFor(t)
	orgs := adminClient(t, s, "root:orgs")
	s.KubectlAsUser(t, "alice", "root:orgs").RunStdin(t, accountYAML("bindorg", "org", "alice"), "create", "-f", "-")
	waitAccountReady(t, s.KubectlAsUser(t, "alice", "root:orgs"), "bindorg")
	waitStore(t, orgs, "bindorg")
	t.Cleanup(func() { s.KubectlFor("root:orgs").Run(t, "delete", "account", "bindorg", "--wait=false") })

	provider := s.CreateOrg(t, "fga-provider")
	s.ExportCRD(t, provider, gadgetCRD, "fga.example.dev")
	info := accountInfoOf(t, s, "root:orgs:bindorg")
	consumer := framework.Workspace{Name: "bindorg", Path: "root:orgs:bindorg", Cluster: info.Spec.Account.GeneratedClusterID}
	s.Bind(t, consumer, "gadgets", provider, "fga.example.dev", nil)

	gadget := fga.Resource{Group: "fga.example.dev", Plural: "gadgets", Singular: "gadget", Namespaced: true}
	framework.Eventually(t, 2*time.Minute, time.Second, "the bound gadgets to join bindorg's model", func() (bool, string) {
		st := &corev1alpha1.Store{}
		if err := orgs.Get(ctxFor(t), client.ObjectKey{Name: "bindorg"}, st); err != nil {
			return false, err.Error()
		}
		m, err := f.Model(ctxFor(t), st.Status.StoreID, st.Status.AuthorizationModelID)
		if err != nil || m == nil {
			return false, fmt.Sprint(err)
		}
		_, rel := typeRelations(m, fga.NamespaceType)[gadget.Relation("create")]
		return hasType(m, gadget.Type()) && rel, fmt.Sprintf("%d types", len(m.GetTypeDefinitions()))
	})
	// alice, owner of the org, may create gadgets in its namespaces.
	ns := fga.NamespaceObject(info.Spec.Account.GeneratedClusterID, "default")
	st := waitStore(t, orgs, "bindorg")
	ok, err := f.CheckContextual(ctxFor(t), st.Status.StoreID,
		corev1alpha1.Tuple{Object: ns, Relation: gadget.Relation("create"), User: "user:alice"},
		[]corev1alpha1.Tuple{{Object: ns, Relation: "parent", User: fga.AccountObject(info.Spec.Account.OriginClusterID, "bindorg")}})
	if err != nil || !ok {
		t.Fatalf("alice may not create gadgets in bindorg's default namespace: %v %v", ok, err)
	}
}
