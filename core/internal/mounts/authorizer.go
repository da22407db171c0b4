package mounts

import (
	"context"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// AccessVerb and ContentSubresource are what a request to a mounted
// workspace is authorized as, in the parent workspace: verb "access" on
// tenancy.kcp.io workspaces/content named after the mounted workspace
// (kcp's historical "workspace content" permission; cluster-admin of the
// parent has it).
const (
	AccessVerb         = "access"
	ContentSubresource = "content"
)

// Authorizer wraps the server's authorizer for the handler chain of
// mounted workspaces: there, whatever the request is, the question asked
// is whether the user may access the mounted workspace's content in its
// parent (the context's cluster is the parent). What the user may do
// inside the mounted API is for the mount's server to decide. Requests
// that are not to a mounted workspace are passed on unchanged.
type Authorizer struct {
	Next authorizer.Authorizer
}

// Authorize implements authorizer.Authorizer.
func (a Authorizer) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	t, ok := targetFrom(ctx)
	if !ok {
		return a.Next.Authorize(ctx, attrs)
	}
	return a.Next.Authorize(ctx, ContentAttributes(attrs, t.Name))
}

// ContentAttributes are the attributes asked in the parent for a request
// of attrs' user to the mounted workspace name.
func ContentAttributes(attrs authorizer.Attributes, name string) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{User: attrs.GetUser(), Verb: AccessVerb,
		APIGroup: tenancyv1alpha1.SchemeGroupVersion.Group, APIVersion: tenancyv1alpha1.SchemeGroupVersion.Version,
		Resource: "workspaces", Subresource: ContentSubresource, Name: name, ResourceRequest: true}
}
