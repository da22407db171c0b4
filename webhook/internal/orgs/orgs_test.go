package orgs

import (
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
)

func TestRequest(t *testing.T) {
	for _, tc := range []struct {
		ra   authorizationv1.ResourceAttributes
		want string
	}{
		{authorizationv1.ResourceAttributes{Verb: "delete", Group: "core.platform-mesh.io", Resource: "accounts", Name: "acme"}, "acme/delete"},
		{authorizationv1.ResourceAttributes{Verb: "deletecollection", Group: "core.platform-mesh.io", Resource: "accounts"}, ""},
		{authorizationv1.ResourceAttributes{Verb: "patch", Group: "core.platform-mesh.io", Resource: "accounts", Name: "acme"}, ""},
		{authorizationv1.ResourceAttributes{Verb: "get", Group: "core.platform-mesh.io", Resource: "accounts", Name: "acme"}, "acme/get"},
		{authorizationv1.ResourceAttributes{Verb: "watch", Group: "core.platform-mesh.io", Resource: "accounts", Name: "acme"}, "acme/get"},
		{authorizationv1.ResourceAttributes{Verb: "list", Group: "tenancy.kcp.io", Resource: "workspaces", Name: "acme"}, "acme/get"},
		{authorizationv1.ResourceAttributes{Verb: "list", Group: "core.platform-mesh.io", Resource: "accounts"}, ""},
		{authorizationv1.ResourceAttributes{Verb: "update", Group: "core.platform-mesh.io", Resource: "accounts", Name: "acme"}, ""},
		{authorizationv1.ResourceAttributes{Verb: "delete", Group: "tenancy.kcp.io", Resource: "workspaces", Name: "acme"}, ""},
		{authorizationv1.ResourceAttributes{Verb: "get", Group: "core.platform-mesh.io", Resource: "accounts", Name: "acme", Subresource: "status"}, ""},
		{authorizationv1.ResourceAttributes{Verb: "get", Group: "core.platform-mesh.io", Resource: "stores", Name: "acme"}, ""},
		{authorizationv1.ResourceAttributes{Verb: "get", Group: "tenancy.kcp.io", Resource: "workspacetypes", Name: "acme-org"}, ""},
	} {
		name, rel, ok := Request(&tc.ra)
		got := ""
		if ok {
			got = name + "/" + rel
		}
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("Request(%+v) = %q, %v; want %q", tc.ra, got, ok, tc.want)
		}
	}
	if _, _, ok := Request(nil); ok {
		t.Error("Request(nil) must be false")
	}
}
