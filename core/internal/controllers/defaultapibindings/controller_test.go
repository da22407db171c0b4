package defaultapibindings

import (
	"testing"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
)

func TestAcceptAll(t *testing.T) {
	claims := []apisv1alpha2.PermissionClaim{
		{GroupResource: apisv1alpha2.GroupResource{Resource: "namespaces"}, Verbs: []string{"*"}},
		{GroupResource: apisv1alpha2.GroupResource{Group: "tenancy.kcp.io", Resource: "workspaces"}, Verbs: []string{"get", "create"}, IdentityHash: "h"},
	}
	got := AcceptAll(claims)
	if len(got) != len(claims) {
		t.Fatalf("got %d claims, want %d", len(got), len(claims))
	}
	for i, c := range got {
		if c.State != apisv1alpha2.ClaimAccepted || !c.Selector.MatchAll {
			t.Errorf("claim %d not accepted for all objects: %+v", i, c)
		}
		if c.Group != claims[i].Group || c.Resource != claims[i].Resource || c.IdentityHash != claims[i].IdentityHash ||
			len(c.Verbs) != len(claims[i].Verbs) {
			t.Errorf("claim %d is %+v, want %+v", i, c.PermissionClaim, claims[i])
		}
	}
	got[1].Verbs[0] = "changed"
	if claims[1].Verbs[0] != "get" {
		t.Error("AcceptAll shares the export's verbs")
	}
	if AcceptAll(nil) != nil {
		t.Error("no claims, no accepted claims")
	}
}
