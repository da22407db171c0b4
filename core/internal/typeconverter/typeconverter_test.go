package typeconverter

import (
	"reflect"
	"testing"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/util"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	builtinapi "github.com/meshplane/meshplane/core/internal/apis/builtin"
	"github.com/meshplane/meshplane/core/internal/openapi/definitions"
)

// stockConverter is the type converter the generic server builds for
// APIBindings.
func stockConverter(t *testing.T) managedfields.TypeConverter {
	t.Helper()
	namer := openapinamer.NewDefinitionNamer(builtinapi.Scheme)
	config := genericapiserver.DefaultOpenAPIV3Config(definitions.Definitions, namer)
	spec, err := builder3.BuildOpenAPIDefinitionsForResources(config, util.GetCanonicalTypeName(&apisv1alpha2.APIBinding{}))
	if err != nil {
		t.Fatal(err)
	}
	c, err := managedfields.NewTypeConverter(spec, false)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func bindingWithClaims() *apisv1alpha2.APIBinding {
	b := &apisv1alpha2.APIBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: apisv1alpha2.SchemeGroupVersion.String(), Kind: "APIBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: "b"},
		Spec: apisv1alpha2.APIBindingSpec{
			Reference: apisv1alpha2.BindingReference{Export: &apisv1alpha2.ExportBindingReference{Path: "root", Name: "e"}},
		},
	}
	for _, gr := range []apisv1alpha2.GroupResource{{Group: "tenancy.kcp.io", Resource: "workspaces"}, {Resource: "configmaps"}} {
		b.Spec.PermissionClaims = append(b.Spec.PermissionClaims, apisv1alpha2.AcceptablePermissionClaim{
			ScopedPermissionClaim: apisv1alpha2.ScopedPermissionClaim{
				PermissionClaim: apisv1alpha2.PermissionClaim{GroupResource: gr, Verbs: []string{"get"}},
				Selector:        apisv1alpha2.PermissionClaimSelector{MatchAll: true},
			},
			State: apisv1alpha2.ClaimAccepted,
		})
	}
	return b
}

// claimsOf reads spec.permissionClaims back out of a typed value.
func claimsOf(t *testing.T, c managedfields.TypeConverter, obj runtime.Object) []any {
	t.Helper()
	tv, err := c.ObjectToTyped(obj)
	if err != nil {
		t.Fatalf("ObjectToTyped: %v", err)
	}
	back, err := c.TypedToObject(tv)
	if err != nil {
		t.Fatalf("TypedToObject: %v", err)
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(back)
	if err != nil {
		t.Fatal(err)
	}
	claims, _ := u["spec"].(map[string]any)["permissionClaims"].([]any)
	return claims
}

// TestStockConverterMisreadsClaims documents the bug this package works
// around: if it fails, structured-merge-diff reads deeply inlined structs
// correctly and the workaround can go.
func TestStockConverterMisreadsClaims(t *testing.T) {
	claims := claimsOf(t, stockConverter(t), bindingWithClaims())
	first := claims[0].(map[string]any)
	if first["group"] != "workspaces" {
		t.Skipf("the stock converter reads claims correctly now (%v): the workaround is no longer needed", first)
	}
}

func TestUnstructuredReadsClaims(t *testing.T) {
	claims := claimsOf(t, Unstructured(stockConverter(t)), bindingWithClaims())
	want := []map[string]any{
		{"group": "tenancy.kcp.io", "resource": "workspaces"},
		{"resource": "configmaps"},
	}
	if len(claims) != len(want) {
		t.Fatalf("want %d claims, got %v", len(want), claims)
	}
	for i, w := range want {
		got := claims[i].(map[string]any)
		for k, v := range w {
			if got[k] != v {
				t.Errorf("claim %d: %s = %v, want %v (claim %v)", i, k, got[k], v, got)
			}
		}
		if _, ok := w["group"]; !ok && got["group"] != nil && got["group"] != "" {
			t.Errorf("claim %d: group = %v, want none", i, got["group"])
		}
	}
}

// TestApplyKeepsClaims applies the live object onto itself, as a second
// `kubectl apply --server-side` does, and checks the claims survive.
func TestApplyKeepsClaims(t *testing.T) {
	c := Unstructured(stockConverter(t))
	live, err := c.ObjectToTyped(bindingWithClaims())
	if err != nil {
		t.Fatal(err)
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(bindingWithClaims())
	if err != nil {
		t.Fatal(err)
	}
	// What a user applies: the claims with group "" spelled out.
	claims := u["spec"].(map[string]any)["permissionClaims"].([]any)
	claims[1].(map[string]any)["group"] = ""
	applied, err := c.ObjectToTyped(&unstructured.Unstructured{Object: u})
	if err != nil {
		t.Fatal(err)
	}
	merged, err := live.Merge(applied)
	if err != nil {
		t.Fatalf("merge: %v", err)
	}
	obj, err := c.TypedToObject(merged)
	if err != nil {
		t.Fatal(err)
	}
	got := claimsOf(t, c, obj)
	if len(got) != 2 {
		t.Fatalf("after applying the same claims, want 2 claims, got %d: %v", len(got), got)
	}
	if g := got[0].(map[string]any)["group"]; g != "tenancy.kcp.io" {
		t.Errorf("first claim's group = %v, want tenancy.kcp.io", g)
	}
	// Applying what is stored changes nothing, so nothing is written.
	if cmp, err := live.Compare(merged); err != nil || !cmp.IsSame() {
		t.Errorf("applying the stored claims again changes the object: %v (%v)", cmp, err)
	}
	set, err := merged.ToFieldSet()
	if err != nil {
		t.Fatal(err)
	}
	if set.Has(fieldpath.MakePathOrDie("spec", "permissionClaims", 2)) {
		t.Errorf("merged claims have a third element")
	}
}

func TestAffected(t *testing.T) {
	got := map[string][]string{}
	for _, gv := range builtinapi.GroupVersions {
		if kinds := Affected(builtinapi.Scheme, gv); len(kinds) > 0 {
			got[gv.String()] = kinds
		}
	}
	want := map[string][]string{"apis.kcp.io/v1alpha2": {"APIBinding"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("kinds with structs inlined %d levels deep: got %v, want %v", misreadDepth, got, want)
	}
}
