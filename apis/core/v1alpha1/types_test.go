package v1alpha1

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// The JSON documents below are written the way Platform Mesh's operators
// put these objects on the wire. Each must decode into our types without
// losing a field and encode back to the same JSON.
var wireTests = []struct {
	name string
	obj  runtime.Object
	json string
}{
	{
		name: "Account",
		obj:  &Account{},
		json: `{
			"apiVersion": "core.platform-mesh.io/v1alpha1",
			"kind": "Account",
			"metadata": {"name": "acme", "generation": 2},
			"spec": {
				"type": "org",
				"displayName": "ACME Inc.",
				"description": "The ACME organization",
				"creator": "alice@example.com",
				"data": {"costCenter": "1234", "tags": ["a", "b"], "nested": {"x": 1}}
			},
			"status": {
				"conditions": [{"type": "Ready", "status": "True", "observedGeneration": 2,
					"lastTransitionTime": "2026-11-22T10:00:00Z", "reason": "Reconciled", "message": "ok"}],
				"observedGeneration": 2,
				"nextReconcileTime": "2026-11-22T11:00:00Z"
			}
		}`,
	},
	{
		name: "AccountInfo",
		obj:  &AccountInfo{},
		json: `{
			"apiVersion": "core.platform-mesh.io/v1alpha1",
			"kind": "AccountInfo",
			"metadata": {"name": "account"},
			"spec": {
				"fga": {"store": {"id": "01JABCDEF"}},
				"account": {"name": "team-a", "generatedClusterId": "2x8abc", "originClusterId": "1y7def",
					"path": "root:orgs:acme:team-a", "url": "https://meshplane.example/clusters/2x8abc", "type": "account"},
				"parentAccount": {"name": "acme", "generatedClusterId": "1y7def", "originClusterId": "0orgs0",
					"path": "root:orgs:acme", "url": "https://meshplane.example/clusters/1y7def", "type": "org"},
				"organization": {"name": "acme", "generatedClusterId": "1y7def", "originClusterId": "0orgs0",
					"path": "root:orgs:acme", "url": "https://meshplane.example/clusters/1y7def", "type": "org"},
				"clusterInfo": {"ca": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"},
				"oidc": {"issuerUrl": "https://idp.example/realms/acme", "clients": {"acme": {"clientId": "acme-portal"}}}
			},
			"status": {}
		}`,
	},
	{
		name: "Store",
		obj:  &Store{},
		json: `{
			"apiVersion": "core.platform-mesh.io/v1alpha1",
			"kind": "Store",
			"metadata": {"name": "acme"},
			"spec": {
				"coreModule": "module core\n\ntype user\n",
				"tuples": [{"object": "role:core_platform-mesh_io_account/1y7def/acme/owner", "relation": "assignee", "user": "user:alice@example.com"}]
			},
			"status": {
				"conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": "2026-11-22T10:00:00Z",
					"reason": "Pending", "message": "waiting"}],
				"storeId": "01JABCDEF",
				"authorizationModelId": "01JMODEL",
				"managedTuples": [{"object": "core_platform-mesh_io_account:1y7def/acme", "relation": "owner", "user": "role:core_platform-mesh_io_account/1y7def/acme/owner#assignee"}]
			}
		}`,
	},
	{
		name: "AuthorizationModel",
		obj:  &AuthorizationModel{},
		json: `{
			"apiVersion": "core.platform-mesh.io/v1alpha1",
			"kind": "AuthorizationModel",
			"metadata": {"name": "example.com-widgets-acme"},
			"spec": {
				"storeRef": {"name": "acme", "cluster": "root:orgs"},
				"model": "module widgets\n\nextend type core_platform-mesh_io_account\n",
				"tuples": [{"object": "a:b", "relation": "c", "user": "user:d"}]
			},
			"status": {
				"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-22T10:00:00Z",
					"reason": "Reconciled", "message": ""}],
				"managedTuples": [{"object": "a:b", "relation": "c", "user": "user:d"}]
			}
		}`,
	},
	{
		name: "AuthorizationModel with the deprecated storeRef.path",
		obj:  &AuthorizationModel{},
		json: `{
			"apiVersion": "core.platform-mesh.io/v1alpha1",
			"kind": "AuthorizationModel",
			"metadata": {"name": "old"},
			"spec": {"storeRef": {"name": "acme", "cluster": "root:orgs", "path": "root:orgs"}, "model": "module m\n"},
			"status": {}
		}`,
	},
}

func TestWireCompatibleRoundTrip(t *testing.T) {
	for _, tt := range wireTests {
		t.Run(tt.name, func(t *testing.T) {
			dec := json.NewDecoder(bytes.NewReader([]byte(tt.json)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(tt.obj); err != nil {
				t.Fatalf("decoding Platform Mesh JSON: %v", err)
			}
			got, err := json.Marshal(tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(t, got, []byte(tt.json)) {
				t.Errorf("re-encoded JSON differs from the input\n got: %s\nwant: %s", got, compact(t, tt.json))
			}
		})
	}
}

func TestDecodedFields(t *testing.T) {
	var a Account
	if err := json.Unmarshal([]byte(wireTests[0].json), &a); err != nil {
		t.Fatal(err)
	}
	if a.Spec.Type != AccountTypeOrg || a.Spec.DisplayName != "ACME Inc." || a.Spec.Creator == nil || *a.Spec.Creator != "alice@example.com" {
		t.Errorf("Account spec decoded wrongly: %+v", a.Spec)
	}
	if a.Spec.Data == nil || !bytes.Contains(a.Spec.Data.Raw, []byte(`"costCenter"`)) {
		t.Errorf("Account spec.data lost: %+v", a.Spec.Data)
	}

	var ai AccountInfo
	if err := json.Unmarshal([]byte(wireTests[1].json), &ai); err != nil {
		t.Fatal(err)
	}
	if ai.Spec.FGA.Store.ID != "01JABCDEF" || ai.Spec.Account.GeneratedClusterID != "2x8abc" ||
		ai.Spec.Account.OriginClusterID != "1y7def" || ai.Spec.Organization.Type != AccountTypeOrg ||
		ai.Spec.ParentAccount == nil || ai.Spec.ParentAccount.Path != "root:orgs:acme" ||
		ai.Spec.OIDC == nil || ai.Spec.OIDC.Clients["acme"].ClientID != "acme-portal" {
		t.Errorf("AccountInfo spec decoded wrongly: %+v", ai.Spec)
	}

	var m AuthorizationModel
	if err := json.Unmarshal([]byte(wireTests[3].json), &m); err != nil {
		t.Fatal(err)
	}
	if m.Spec.StoreRef != (WorkspaceStoreRef{Name: "acme", Cluster: "root:orgs"}) {
		t.Errorf("AuthorizationModel storeRef = %+v", m.Spec.StoreRef)
	}
}

// An organization's AccountInfo has no parent; it must not be sent as null
// or as an empty object.
func TestOmittedOptionalFields(t *testing.T) {
	out, err := json.Marshal(&AccountInfo{Spec: AccountInfoSpec{Account: AccountLocation{Name: "acme"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"parentAccount"`, `"oidc"`} {
		if bytes.Contains(out, []byte(field)) {
			t.Errorf("%s present in %s", field, out)
		}
	}
	out, err = json.Marshal(&Account{Spec: AccountSpec{Type: AccountTypeAccount, DisplayName: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"creator"`, `"data"`, `"description"`, `"nextReconcileTime"`, `"conditions"`} {
		if bytes.Contains(out, []byte(field)) {
			t.Errorf("%s present in %s", field, out)
		}
	}
}

func TestScheme(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{AccountKind, AccountInfoKind, StoreKind, AuthorizationModelKind} {
		for _, k := range []string{kind, kind + "List"} {
			if !scheme.Recognizes(SchemeGroupVersion.WithKind(k)) {
				t.Errorf("scheme does not recognize %s", SchemeGroupVersion.WithKind(k))
			}
		}
	}

	// The universal decoder picks the Go type from apiVersion and kind.
	codecs := serializer.NewCodecFactory(scheme)
	for _, tt := range wireTests {
		obj, gvk, err := codecs.UniversalDeserializer().Decode([]byte(tt.json), nil, nil)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if reflect.TypeOf(obj) != reflect.TypeOf(tt.obj) || gvk.Group != GroupName || gvk.Version != Version {
			t.Errorf("%s: decoded %T as %v", tt.name, obj, gvk)
		}
	}
	if got := Resource(AccountResource).String(); got != "accounts.core.platform-mesh.io" {
		t.Errorf("Resource(accounts) = %s", got)
	}
	if got := Kind(StoreKind).String(); got != "Store.core.platform-mesh.io" {
		t.Errorf("Kind(Store) = %s", got)
	}
}

func TestDeepCopyIsIndependent(t *testing.T) {
	for _, tt := range wireTests {
		if err := json.Unmarshal([]byte(tt.json), tt.obj); err != nil {
			t.Fatal(err)
		}
		cp := tt.obj.DeepCopyObject()
		if !reflect.DeepEqual(cp, tt.obj) {
			t.Errorf("%s: deep copy differs from the original", tt.name)
		}
	}
	a := &Account{}
	if err := json.Unmarshal([]byte(wireTests[0].json), a); err != nil {
		t.Fatal(err)
	}
	cp := a.DeepCopy()
	*cp.Spec.Creator = "mallory"
	cp.Spec.Data.Raw[0] = ' '
	cp.Status.Conditions[0].Status = metav1.ConditionFalse
	if *a.Spec.Creator != "alice@example.com" || a.Spec.Data.Raw[0] != '{' || a.Status.Conditions[0].Status != metav1.ConditionTrue {
		t.Error("changing the deep copy changed the original")
	}
}

func TestConditionAccessors(t *testing.T) {
	conds := []metav1.Condition{{Type: ConditionReady, Status: metav1.ConditionTrue, Reason: ReasonReconciled}}
	for _, obj := range []interface {
		GetConditions() []metav1.Condition
		SetConditions([]metav1.Condition)
	}{&Account{}, &Store{}, &AuthorizationModel{}} {
		obj.SetConditions(conds)
		if !reflect.DeepEqual(obj.GetConditions(), conds) {
			t.Errorf("%T: GetConditions after SetConditions = %v", obj, obj.GetConditions())
		}
	}
}

func TestTupleString(t *testing.T) {
	tuple := Tuple{Object: "doc:1", Relation: "viewer", User: "user:anne"}
	if got := tuple.String(); got != "doc:1#viewer@user:anne" {
		t.Errorf("String() = %q", got)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

func compact(t *testing.T, s string) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}
