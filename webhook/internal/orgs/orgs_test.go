package orgs

import (
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
)

func TestNamedRead(t *testing.T) {
	for _, tc := range []struct {
		ra   authorizationv1.ResourceAttributes
		want string
	}{
		{authorizationv1.ResourceAttributes{Verb: "get", Group: "core.platform-mesh.io", Resource: "accounts", Name: "acme"}, "acme"},
		{authorizationv1.ResourceAttributes{Verb: "watch", Group: "core.platform-mesh.io", Resource: "accounts", Name: "acme"}, "acme"},
		{authorizationv1.ResourceAttributes{Verb: "list", Group: "tenancy.kcp.io", Resource: "workspaces", Name: "acme"}, "acme"},
		{authorizationv1.ResourceAttributes{Verb: "list", Group: "core.platform-mesh.io", Resource: "accounts"}, ""},
		{authorizationv1.ResourceAttributes{Verb: "update", Group: "core.platform-mesh.io", Resource: "accounts", Name: "acme"}, ""},
		{authorizationv1.ResourceAttributes{Verb: "delete", Group: "tenancy.kcp.io", Resource: "workspaces", Name: "acme"}, ""},
		{authorizationv1.ResourceAttributes{Verb: "get", Group: "core.platform-mesh.io", Resource: "accounts", Name: "acme", Subresource: "status"}, ""},
		{authorizationv1.ResourceAttributes{Verb: "get", Group: "core.platform-mesh.io", Resource: "stores", Name: "acme"}, ""},
		{authorizationv1.ResourceAttributes{Verb: "get", Group: "tenancy.kcp.io", Resource: "workspacetypes", Name: "acme-org"}, ""},
	} {
		got, ok := NamedRead(&tc.ra)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("NamedRead(%+v) = %q, %v; want %q", tc.ra, got, ok, tc.want)
		}
	}
	if _, ok := NamedRead(nil); ok {
		t.Error("NamedRead(nil) must be false")
	}
}
