package apibinding

import (
	"testing"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
)

func TestUnexpectedClaims(t *testing.T) {
	claim := func(group, resource, hash string, state apisv1alpha2.AcceptablePermissionClaimState) apisv1alpha2.AcceptablePermissionClaim {
		return apisv1alpha2.AcceptablePermissionClaim{State: state, ScopedPermissionClaim: apisv1alpha2.ScopedPermissionClaim{
			PermissionClaim: apisv1alpha2.PermissionClaim{GroupResource: apisv1alpha2.GroupResource{Group: group, Resource: resource}, IdentityHash: hash}}}
	}
	export := &apisv1alpha2.APIExport{Spec: apisv1alpha2.APIExportSpec{PermissionClaims: []apisv1alpha2.PermissionClaim{
		{GroupResource: apisv1alpha2.GroupResource{Resource: "configmaps"}},
		{GroupResource: apisv1alpha2.GroupResource{Group: "g.io", Resource: "things"}, IdentityHash: "abc"},
	}}}
	b := &apisv1alpha2.APIBinding{Spec: apisv1alpha2.APIBindingSpec{PermissionClaims: []apisv1alpha2.AcceptablePermissionClaim{
		claim("", "configmaps", "", apisv1alpha2.ClaimAccepted),
		claim("g.io", "things", "abc", apisv1alpha2.ClaimAccepted),
		claim("g.io", "things", "bogus", apisv1alpha2.ClaimAccepted),
		claim("", "secrets", "", apisv1alpha2.ClaimRejected),
	}}}
	got := unexpectedClaims(export, b)
	if len(got) != 1 || got[0] != `unexpected/invalid claim for things.g.io (identity "bogus")` {
		t.Errorf("unexpected claims = %q", got)
	}
	if errorList(got) != got[0] || errorList([]string{"a", "b"}) != "[a, b]" {
		t.Errorf("errorList renders as an aggregate error")
	}
}
