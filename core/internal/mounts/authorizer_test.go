package mounts

import (
	"context"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// TestAuthorizer: on the mounts chain the question is always access to the
// mounted workspace's content in the parent; elsewhere it is unchanged.
func TestAuthorizer(t *testing.T) {
	var asked authorizer.Attributes
	a := Authorizer{Next: authorizer.AuthorizerFunc(func(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
		asked = attrs
		return authorizer.DecisionAllow, "", nil
	})}
	request := authorizer.AttributesRecord{User: &user.DefaultInfo{Name: "bob"}, Verb: "delete", Resource: "configmaps", Namespace: "default",
		Name: "x", ResourceRequest: true}

	ctx := context.WithValue(context.Background(), targetKey{}, target{Mounted: Mounted{Parent: "org", Name: "b"}, Path: "root:org:b"})
	if _, _, err := a.Authorize(ctx, request); err != nil {
		t.Fatal(err)
	}
	if asked.GetVerb() != AccessVerb || asked.GetResource() != "workspaces" || asked.GetSubresource() != ContentSubresource ||
		asked.GetAPIGroup() != "tenancy.kcp.io" || asked.GetName() != "b" || asked.GetNamespace() != "" || asked.GetUser().GetName() != "bob" {
		t.Errorf("asked %s %s/%s %q in %q as %s; want bob: access tenancy.kcp.io workspaces/content b", asked.GetVerb(), asked.GetResource(),
			asked.GetSubresource(), asked.GetName(), asked.GetNamespace(), asked.GetUser().GetName())
	}

	if _, _, err := a.Authorize(context.Background(), request); err != nil {
		t.Fatal(err)
	}
	if asked.GetVerb() != "delete" || asked.GetResource() != "configmaps" {
		t.Errorf("a request outside a mount was asked as %s %s, want it unchanged", asked.GetVerb(), asked.GetResource())
	}
}
