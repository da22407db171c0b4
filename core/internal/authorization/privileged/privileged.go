// Package privileged names the identities the core treats as the system's
// own and tells whether a request comes from one. A system identity is a
// member of one of Groups that authenticated as itself: an impersonated
// identity is never one, whoever impersonates it, so system-only fields,
// annotations and headers are honoured only from the credentials the
// system holds.
package privileged

import (
	"context"
	"slices"
	"strings"

	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"
)

// Groups are the groups of the system's own credentials (kcp's): the
// shard admin and the credentials kcp gives its components.
var Groups = []string{
	user.SystemPrivilegedGroup,
	"system:kcp:logical-cluster-admin",
	"system:kcp:external-logical-cluster-admin",
	"system:kcp:workspace-bootstrapper",
}

// InGroups reports whether u is a member of one of Groups.
func InGroups(u user.Info) bool {
	if u == nil {
		return false
	}
	for _, g := range u.GetGroups() {
		if slices.Contains(Groups, g) {
			return true
		}
	}
	return false
}

// System reports whether the request of ctx, made by u, comes from a
// system identity: u is in Groups and was not impersonated.
func System(ctx context.Context, u user.Info) bool {
	return InGroups(u) && !Impersonated(ctx)
}

type impersonatedKey struct{}

// WithImpersonated marks ctx as a request that asks for impersonation
// (the impersonation filter sets it before authentication).
func WithImpersonated(ctx context.Context) context.Context {
	return context.WithValue(ctx, impersonatedKey{}, true)
}

// Impersonated tells whether the request of ctx asked for impersonation.
func Impersonated(ctx context.Context) bool {
	v, _ := ctx.Value(impersonatedKey{}).(bool)
	return v
}

// Group reports whether a group carries privileges nobody may impersonate
// without holding it: system:masters, kcp's system:kcp:* groups, the
// service account groups (which name service accounts of any cluster) and
// the nodes group.
func Group(g string) bool {
	return g == user.SystemPrivilegedGroup || strings.HasPrefix(g, "system:kcp:") ||
		g == serviceaccount.AllServiceAccountsGroup || strings.HasPrefix(g, serviceaccount.ServiceAccountGroupPrefix) ||
		g == user.NodesGroup
}
