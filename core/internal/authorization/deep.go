package authorization

import (
	"context"
	"net/http"
	"slices"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/meshplane/meshplane/core/internal/authorization/privileged"
)

// DeepReviewHeader asks for a deep SubjectAccessReview (kcp's header): the
// review is answered by the cluster's own RBAC alone (system:masters, the
// bootstrap policy, its bindings), without the workspace access rule, the
// virtual workspaces' layers or the webhook. It is what the bind check
// asks (NewBind), so a shard asking another about an export in its
// clusters gets the answer the export's shard would give itself.
const DeepReviewHeader = "X-Kcp-Internal-Deep-SubjectAccessReview"

type deepKey struct{}

// WithDeepReviews marks in the context a SubjectAccessReview sent with
// DeepReviewHeader by a member of system:masters (the shards' admin
// credentials) who authenticated as itself. From anybody else, from an
// impersonated user, or on any other request, the header means nothing.
// It runs after authentication and authorization.
func WithDeepReviews(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(DeepReviewHeader) != "true" {
			next.ServeHTTP(w, r)
			return
		}
		ctx := r.Context()
		info, ok := genericapirequest.RequestInfoFrom(ctx)
		if !ok || !info.IsResourceRequest || info.APIGroup != authorizationv1.GroupName || info.Resource != "subjectaccessreviews" || info.Verb != "create" {
			next.ServeHTTP(w, r)
			return
		}
		u, ok := genericapirequest.UserFrom(ctx)
		if !ok || !slices.Contains(u.GetGroups(), user.SystemPrivilegedGroup) || privileged.Impersonated(ctx) {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, deepKey{}, true)))
	})
}

// IsDeepReview tells whether ctx is a deep SubjectAccessReview's
// (WithDeepReviews).
func IsDeepReview(ctx context.Context) bool {
	deep, _ := ctx.Value(deepKey{}).(bool)
	return deep
}

// ForReviews returns the authorizer of SubjectAccessReviews: deep for deep
// reviews, full for the others.
func ForReviews(full, deep authorizer.Authorizer) authorizer.Authorizer {
	return authorizer.AuthorizerFunc(func(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		if IsDeepReview(ctx) {
			return deep.Authorize(ctx, a)
		}
		return full.Authorize(ctx, a)
	})
}
