// Package impersonation scopes impersonation to the logical cluster it
// happens in and keeps privileged identities out of reach, as kcp does.
//
// WithScope adds the extra authentication.kcp.io/scopes: cluster:<cluster>
// to every impersonating request in a logical cluster (SelfSubjectReview
// shows it), so RBAC of other clusters sees the impersonated user only as
// authenticated, and marks the request as impersonating (so system-only
// fields and headers are never honoured from it, see
// authorization/privileged).
//
// Authorizer is consulted before everything else when the generic
// impersonation filter asks whether a requester may impersonate a user, a
// group or an extra: the cluster's own RBAC decides that, and a workspace
// admin holds every verb in it, so without this rule he could become
// system:masters there. Nobody but system:masters may impersonate a
// privileged group or a system: user name they do not hold themselves,
// nor a reserved extra (kcp's authorization.kcp.io/warrant, scopes other
// than the one WithScope adds, a service account's cluster other than the
// request's, any other key of kcp's domain).
package impersonation

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/meshplane/meshplane/core/internal/authorization/privileged"
	"github.com/meshplane/meshplane/core/internal/authorization/rbac"
	"github.com/meshplane/meshplane/core/internal/clusters"
)

// scopeHeader is the impersonation header of the scope extra.
var scopeHeader = authenticationv1.ImpersonateUserExtraHeaderPrefix + url.PathEscape(rbac.ScopeExtraKey)

// legacyClusterExtraKey is the older extra key of the logical cluster a
// review is about (the webhook reads it).
const legacyClusterExtraKey = "authorization.kubernetes.io/cluster-name"

// WithScope marks impersonating requests and adds the cluster scope to
// those in a logical cluster. It must run after the cluster path filter
// and before the generic chain's impersonation filter.
func WithScope(handler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !impersonates(r.Header) {
			handler.ServeHTTP(w, r)
			return
		}
		r = r.Clone(privileged.WithImpersonated(r.Context()))
		if cluster, ok := clusters.From(r.Context()); ok && cluster != clusters.Wildcard &&
			(r.Header.Get(authenticationv1.ImpersonateUserHeader) != "" || r.Header.Get(authenticationv1.ImpersonateUIDHeader) != "") {
			r.Header.Add(scopeHeader, "cluster:"+cluster)
		}
		handler.ServeHTTP(w, r)
	})
}

// impersonates reports whether a request carries any impersonation header.
func impersonates(h http.Header) bool {
	for k := range h {
		if strings.HasPrefix(http.CanonicalHeaderKey(k), "Impersonate-") {
			return true
		}
	}
	return false
}

// Authorizer decides impersonation of privileged identities (see the
// package documentation); it has no opinion on anything else, and none
// for system:masters, who may impersonate anybody.
var Authorizer = authorizer.AuthorizerFunc(authorize)

func authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if !isImpersonation(a) || a.GetUser() == nil {
		return authorizer.DecisionNoOpinion, "", nil
	}
	requester := a.GetUser()
	if slices.Contains(requester.GetGroups(), user.SystemPrivilegedGroup) {
		return authorizer.DecisionNoOpinion, "", nil
	}
	cluster, _ := clusters.From(ctx)
	name := a.GetName()
	switch a.GetResource() {
	case "groups":
		// "*" is the filter's shortcut for many groups at once: refused,
		// so each group is asked on its own.
		if name == "*" || (privileged.Group(name) && !slices.Contains(requester.GetGroups(), name)) {
			return deny("group %q is privileged: only its members and system:masters may impersonate it", name)
		}
	case "users":
		if name == "*" || (reservedUser(name) && name != requester.GetName()) {
			return deny("user %q is a system identity: only system:masters may impersonate it", name)
		}
	case "nodes":
		return deny("only system:masters may impersonate nodes")
	case "userextras":
		return authorizeExtra(requester, cluster, strings.ToLower(a.GetSubresource()), name)
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// authorizeExtra decides impersonation of one extra value.
func authorizeExtra(requester user.Info, cluster, key, value string) (authorizer.Decision, string, error) {
	switch {
	case key == "*" || value == "*":
		return deny("impersonating extras at once is refused; each is asked on its own")
	case key == rbac.ScopeExtraKey:
		if cluster != "" && cluster != clusters.Wildcard && value == "cluster:"+cluster {
			// The scope WithScope adds: it only takes permissions away.
			return authorizer.DecisionAllow, "", nil
		}
		return deny("extra %s: only the scope of the request's own cluster (cluster:%s) may be impersonated", key, cluster)
	case key == rbac.ClusterExtraKey && cluster != "" && value == cluster:
		// A service account of the request's own cluster.
		return authorizer.DecisionNoOpinion, "", nil
	case reservedExtra(key) && !slices.Contains(requester.GetExtra()[key], value):
		return deny("extra %s is reserved to the system: only system:masters may impersonate it", key)
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func deny(format string, args ...any) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, fmt.Sprintf(format, args...), nil
}

// isImpersonation reports whether a is one of the impersonation filter's
// checks: verb impersonate (legacy) or impersonate:<mode> (constrained
// impersonation; impersonate-on:<mode>:<verb> is about the request, not
// the identity).
func isImpersonation(a authorizer.Attributes) bool {
	verb := a.GetVerb()
	if verb != "impersonate" && !strings.HasPrefix(verb, "impersonate:") {
		return false
	}
	g := a.GetAPIGroup()
	return a.IsResourceRequest() && (g == "" || g == authenticationv1.SchemeGroupVersion.Group)
}

// reservedUser reports whether a user name belongs to the system: system:
// names (kcp's global service account names system:kcp:serviceaccount:...
// among them) other than anonymous. Service accounts of a namespace are
// asked as serviceaccounts, not users.
func reservedUser(name string) bool {
	return strings.HasPrefix(name, "system:") && name != user.Anonymous
}

// reservedExtra reports whether an extra key is the system's: every key
// of kcp's domain (warrants, scopes, the review's cluster) and the keys
// naming a logical cluster.
func reservedExtra(key string) bool {
	domain, _, _ := strings.Cut(key, "/")
	return domain == "kcp.io" || strings.HasSuffix(domain, ".kcp.io") ||
		key == rbac.ClusterExtraKey || key == legacyClusterExtraKey
}
