// Package impersonation scopes impersonation to the logical cluster it
// happens in, as kcp does: the impersonated user carries the extra
// authentication.kcp.io/scopes: cluster:<cluster> (SelfSubjectReview shows
// it), so RBAC of other clusters sees it only as authenticated.
package impersonation

import (
	"context"
	"net/http"
	"net/url"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/meshplane/meshplane/core/internal/authorization/rbac"
	"github.com/meshplane/meshplane/core/internal/clusters"
)

// scopeHeader is the impersonation header of the scope extra.
var scopeHeader = authenticationv1.ImpersonateUserExtraHeaderPrefix + url.PathEscape(rbac.ScopeExtraKey)

// WithScope adds the cluster scope to impersonating requests in a logical
// cluster. It must run after the cluster path filter and before the
// generic chain's impersonation filter.
func WithScope(handler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(authenticationv1.ImpersonateUserHeader) == "" && r.Header.Get(authenticationv1.ImpersonateUIDHeader) == "" {
			handler.ServeHTTP(w, r)
			return
		}
		cluster, ok := clusters.From(r.Context())
		if !ok || cluster == clusters.Wildcard {
			handler.ServeHTTP(w, r)
			return
		}
		r = r.Clone(r.Context())
		r.Header.Add(scopeHeader, "cluster:"+cluster)
		handler.ServeHTTP(w, r)
	})
}

// Authorizer lets everybody add scopes to the user they impersonate (a
// scope only takes permissions away); it has no opinion on anything else.
var Authorizer = authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetVerb() == "impersonate" && a.GetAPIGroup() == authenticationv1.SchemeGroupVersion.Group &&
		a.GetResource() == "userextras" && a.GetSubresource() == rbac.ScopeExtraKey {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
})
