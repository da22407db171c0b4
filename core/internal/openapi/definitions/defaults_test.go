package definitions

import (
	"reflect"
	"testing"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	rbacv1 "k8s.io/api/rbac/v1"
)

// TestListMapKeyDefaults checks the optional keys of kcp's associative
// lists default to "" as in kcp's CRDs, and that nothing else changes.
func TestListMapKeyDefaults(t *testing.T) {
	got := keyDefaults()
	want := map[string]map[string]any{
		apisv1alpha2.AcceptablePermissionClaim{}.OpenAPIModelName(): {"group": "", "identityHash": ""},
		apisv1alpha2.ScopedPermissionClaim{}.OpenAPIModelName():     {"group": "", "identityHash": ""},
		apisv1alpha2.PermissionClaim{}.OpenAPIModelName():           {"group": ""},
	}
	for name, w := range want {
		if !reflect.DeepEqual(got[name], w) {
			t.Errorf("%s: key defaults %v, want %v", name, got[name], w)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("unexpected key defaults on %s: %v", name, got[name])
		}
	}

	defs := Definitions(testRef)
	claim := defs[apisv1alpha2.PermissionClaim{}.OpenAPIModelName()].Schema
	if d := claim.Properties["group"].Default; d != "" {
		t.Errorf("PermissionClaim.group default = %#v, want \"\"", d)
	}
	if d := claim.Properties["verbs"].Default; d != nil {
		t.Errorf("PermissionClaim.verbs (not a key) got default %#v", d)
	}
	plain := GetOpenAPIDefinitions(testRef)[rbacv1.ClusterRole{}.OpenAPIModelName()]
	if !reflect.DeepEqual(defs[rbacv1.ClusterRole{}.OpenAPIModelName()], plain) {
		t.Errorf("a Kubernetes definition changed")
	}
}
