package defaultapibindings

import (
	"testing"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAcceptAll(t *testing.T) {
	claims := []apisv1alpha2.PermissionClaim{
		{GroupResource: apisv1alpha2.GroupResource{Resource: "namespaces"}, Verbs: []string{"*"}},
		{GroupResource: apisv1alpha2.GroupResource{Group: "tenancy.kcp.io", Resource: "workspaces"}, Verbs: []string{"get", "create"}, IdentityHash: "h"},
		{GroupResource: apisv1alpha2.GroupResource{Resource: "configmaps"}, Verbs: []string{"get"},
			DefaultSelector: &apisv1alpha2.PermissionClaimSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"enabled": "true"}}}},
	}
	got := AcceptAll(claims)
	if len(got) != len(claims) {
		t.Fatalf("got %d claims, want %d", len(got), len(claims))
	}
	for i, c := range got {
		if c.State != apisv1alpha2.ClaimAccepted {
			t.Errorf("claim %d not accepted: %+v", i, c)
		}
		if claims[i].DefaultSelector == nil && !c.Selector.MatchAll {
			t.Errorf("claim %d without a default selector not accepted for all objects: %+v", i, c)
		}
		if claims[i].DefaultSelector != nil && (c.Selector.MatchAll || c.Selector.MatchLabels["enabled"] != "true") {
			t.Errorf("claim %d not accepted with its default selector: %+v", i, c.Selector)
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
