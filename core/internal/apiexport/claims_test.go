package apiexport

import (
	"testing"

	"github.com/kcp-dev/logicalcluster/v3"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	"github.com/kcp-dev/sdk/apis/apis/v1alpha2/permissionclaims"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func scoped(resource string, sel apisv1alpha2.PermissionClaimSelector) apisv1alpha2.ScopedPermissionClaim {
	return apisv1alpha2.ScopedPermissionClaim{
		PermissionClaim: apisv1alpha2.PermissionClaim{GroupResource: apisv1alpha2.GroupResource{Resource: resource}, Verbs: []string{"get"}},
		Selector:        sel,
	}
}

func TestClaimLabels(t *testing.T) {
	all := newClaim("prov", "ex", scoped("configmaps", apisv1alpha2.PermissionClaimSelector{MatchAll: true}))
	app := newClaim("prov", "ex2", scoped("configmaps", apisv1alpha2.PermissionClaimSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}))
	// The label is kcp's: the SDK's key and value of the claim, whatever
	// the verbs and the selector.
	k, v, _ := permissionclaims.ToLabelKeyAndValue(logicalcluster.Name("prov"), "ex", apisv1alpha2.PermissionClaim{GroupResource: apisv1alpha2.GroupResource{Resource: "configmaps"}})
	if gk, gv := all.Label(); gk != k || gv != v {
		t.Fatalf("claim label %s=%s, want kcp's %s=%s", gk, gv, k, v)
	}
	k2, v2 := app.Label()
	for _, tc := range []struct {
		name        string
		in          map[string]string
		claims      []Claim
		want        map[string]string
		wantChanged bool
	}{
		{"matchAll labels", nil, []Claim{all}, map[string]string{k: v}, true},
		{"selector matches", map[string]string{"app": "x"}, []Claim{all, app}, map[string]string{"app": "x", k: v, k2: v2}, true},
		{"selector does not match", map[string]string{"app": "y"}, []Claim{all, app}, map[string]string{"app": "y", k: v}, true},
		{"already labelled", map[string]string{k: v}, []Claim{all}, map[string]string{k: v}, false},
		{"stale label goes", map[string]string{k2: v2, "a": "b"}, nil, map[string]string{"a": "b"}, true},
		{"wrong value fixed", map[string]string{k: "other"}, []Claim{all}, map[string]string{k: v}, true},
	} {
		got, changed := ClaimLabels(tc.in, tc.claims)
		if changed != tc.wantChanged || len(got) != len(tc.want) {
			t.Errorf("%s: got %v (changed %v), want %v (changed %v)", tc.name, got, changed, tc.want, tc.wantChanged)
			continue
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
			}
		}
	}
}

func TestConsumersClaims(t *testing.T) {
	c := NewConsumers()
	var heard [][]schema.GroupResource
	c.OnClaimsChange(func(_ string, grs []schema.GroupResource) { heard = append(heard, grs) })
	c.Set("cons", "b", "prov", "ex")
	sel := apisv1alpha2.PermissionClaimSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}
	c.SetClaims("cons", "b", "prov", "ex", []apisv1alpha2.ScopedPermissionClaim{scoped("configmaps", sel)})
	cl, ok := c.Claim("cons", "prov", "ex", "", "configmaps")
	if !ok || !cl.Selects(map[string]string{"app": "x"}) || cl.Selects(nil) {
		t.Fatalf("Claim: %v %v, want the app=x claim", cl, ok)
	}
	if _, ok := c.Claim("cons", "prov", "other", "", "configmaps"); ok {
		t.Errorf("Claim answered for an export the consumer does not bind")
	}
	if len(heard) != 1 || len(heard[0]) != 1 || heard[0][0].Resource != "configmaps" {
		t.Errorf("OnClaimsChange heard %v, want configmaps once", heard)
	}
	c.SetClaims("cons", "b", "prov", "ex", []apisv1alpha2.ScopedPermissionClaim{scoped("configmaps", sel)})
	if len(heard) != 1 {
		t.Errorf("OnClaimsChange heard an unchanged claim: %v", heard)
	}
	c.SetClaims("cons", "b", "", "", nil)
	if len(heard) != 2 || len(c.ClaimsOn("cons", schema.GroupResource{Resource: "configmaps"})) != 0 {
		t.Errorf("dropping the claims: heard %v, claims left %v", heard, c.ClaimsOn("cons", schema.GroupResource{Resource: "configmaps"}))
	}
}

// TestConsumersShareClaims: bindings of one export that apply the same
// claims hold one set of them; other claims or another export get their own.
func TestConsumersShareClaims(t *testing.T) {
	c := NewConsumers()
	sel := apisv1alpha2.PermissionClaimSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}
	applied := []apisv1alpha2.ScopedPermissionClaim{scoped("configmaps", sel), scoped("secrets", sel)}
	for _, consumer := range []string{"a", "b"} {
		c.SetClaims(consumer, "binding", "prov", "ex", applied)
	}
	other := []apisv1alpha2.ScopedPermissionClaim{scoped("configmaps", apisv1alpha2.PermissionClaimSelector{MatchAll: true}), scoped("secrets", sel)}
	c.SetClaims("c", "binding", "prov", "ex", other)
	c.SetClaims("d", "binding", "prov", "other-export", applied)
	first := func(consumer string) *Claim { return &c.claims[consumer]["binding"][0] }
	if first("a") != first("b") {
		t.Error("two bindings applying the same claims of one export hold a copy each")
	}
	if first("a") == first("c") || first("a") == first("d") {
		t.Error("bindings applying other claims, or claims of another export, share the first binding's")
	}
	if cl, ok := c.Claim("a", "prov", "ex", "", "secrets"); ok {
		t.Errorf("Claim answered for a consumer that binds no export: %v", cl)
	}
	if got := c.ClaimsOn("c", schema.GroupResource{Resource: "configmaps"}); len(got) != 1 || !got[0].Selects(nil) {
		t.Errorf("ClaimsOn(c, configmaps) = %v, want the matchAll claim", got)
	}
	if got := c.ClaimsOn("b", schema.GroupResource{Resource: "configmaps"}); len(got) != 1 || got[0].Selects(nil) || !got[0].Selects(map[string]string{"app": "x"}) {
		t.Errorf("ClaimsOn(b, configmaps) = %v, want the app=x claim", got)
	}
}
