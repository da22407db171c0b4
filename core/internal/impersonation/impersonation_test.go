package impersonation

import (
	"context"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

func TestAuthorizer(t *testing.T) {
	ctx := clusters.WithCluster(context.Background(), "c1")
	bob := &user.DefaultInfo{Name: "bob", Groups: []string{"e2e:users", user.AllAuthenticated}}
	admin := &user.DefaultInfo{Name: "kcp-admin", Groups: []string{"system:kcp:admin", user.AllAuthenticated}}
	masters := &user.DefaultInfo{Name: "shard-admin", Groups: []string{user.SystemPrivilegedGroup}}
	impersonate := func(u user.Info, verb, group, resource, sub, name string) authorizer.Attributes {
		return authorizer.AttributesRecord{User: u, Verb: verb, APIGroup: group, Resource: resource, Subresource: sub, Name: name, ResourceRequest: true}
	}
	const (
		allow = authorizer.DecisionAllow
		deny  = authorizer.DecisionDeny
		none  = authorizer.DecisionNoOpinion
	)
	for _, tt := range []struct {
		name  string
		attrs authorizer.Attributes
		want  authorizer.Decision
	}{
		{"bob impersonates system:masters", impersonate(bob, "impersonate", "", "groups", "", "system:masters"), deny},
		{"bob impersonates system:masters (constrained)", impersonate(bob, "impersonate:user-info", "authentication.k8s.io", "groups", "", "system:masters"), deny},
		{"bob impersonates system:kcp:admin", impersonate(bob, "impersonate", "", "groups", "", "system:kcp:admin"), deny},
		{"bob impersonates system:kcp:logical-cluster-admin", impersonate(bob, "impersonate", "", "groups", "", "system:kcp:logical-cluster-admin"), deny},
		{"bob impersonates system:serviceaccounts", impersonate(bob, "impersonate", "", "groups", "", "system:serviceaccounts"), deny},
		{"bob impersonates system:serviceaccounts:default", impersonate(bob, "impersonate", "", "groups", "", "system:serviceaccounts:default"), deny},
		{"bob impersonates many groups at once", impersonate(bob, "impersonate:user-info", "authentication.k8s.io", "groups", "", "*"), deny},
		{"bob impersonates a group of his own choosing", impersonate(bob, "impersonate", "", "groups", "", "team"), none},
		{"bob impersonates his own group", impersonate(bob, "impersonate", "", "groups", "", "e2e:users"), none},
		{"bob impersonates user alice", impersonate(bob, "impersonate", "", "users", "", "alice"), none},
		{"bob impersonates a global service account name", impersonate(bob, "impersonate", "", "users", "", "system:kcp:serviceaccount:c2:default:robot"), deny},
		{"bob impersonates system:apiserver", impersonate(bob, "impersonate", "", "users", "", "system:apiserver"), deny},
		{"bob impersonates anonymous", impersonate(bob, "impersonate", "", "users", "", user.Anonymous), none},
		{"bob impersonates a service account", impersonate(bob, "impersonate", "", "serviceaccounts", "", "robot"), none},
		{"bob impersonates a node", impersonate(bob, "impersonate:arbitrary-node", "authentication.k8s.io", "nodes", "", "n1"), deny},
		{"bob adds this cluster's scope", impersonate(bob, "impersonate", "authentication.k8s.io", "userextras", "authentication.kcp.io/scopes", "cluster:c1"), allow},
		{"bob adds another scope", impersonate(bob, "impersonate", "authentication.k8s.io", "userextras", "authentication.kcp.io/scopes", "cluster:c2"), deny},
		{"bob impersonates a warrant", impersonate(bob, "impersonate", "authentication.k8s.io", "userextras", "authorization.kcp.io/warrant", `{"user":"alice"}`), deny},
		{"bob impersonates the review's cluster", impersonate(bob, "impersonate", "authentication.k8s.io", "userextras", "authorization.kcp.io/cluster-name", "c2"), deny},
		{"bob impersonates another cluster's service account", impersonate(bob, "impersonate", "authentication.k8s.io", "userextras", "authentication.kubernetes.io/cluster-name", "c2"), deny},
		{"bob impersonates this cluster's service account", impersonate(bob, "impersonate", "authentication.k8s.io", "userextras", "authentication.kubernetes.io/cluster-name", "c1"), none},
		{"bob impersonates extras at once", impersonate(bob, "impersonate:user-info", "authentication.k8s.io", "userextras", "*", "*"), deny},
		{"bob impersonates an extra of his own", impersonate(bob, "impersonate", "authentication.k8s.io", "userextras", "example.com/team", "a"), none},
		{"kcp-admin impersonates system:kcp:admin", impersonate(admin, "impersonate", "", "groups", "", "system:kcp:admin"), none},
		{"kcp-admin impersonates system:masters", impersonate(admin, "impersonate", "", "groups", "", "system:masters"), deny},
		{"system:masters impersonates system:masters", impersonate(masters, "impersonate", "", "groups", "", "system:masters"), none},
		{"system:masters impersonates a warrant", impersonate(masters, "impersonate", "authentication.k8s.io", "userextras", "authorization.kcp.io/warrant", "{}"), none},
		{"not an impersonation", impersonate(bob, "get", "", "groups", "", "system:masters"), none},
		{"the request, not the identity", impersonate(bob, "impersonate-on:user-info:get", "", "configmaps", "", "x"), none},
	} {
		if got, reason, _ := Authorizer.Authorize(ctx, tt.attrs); got != tt.want {
			t.Errorf("%s: decision %v (%s), want %v", tt.name, got, reason, tt.want)
		}
	}
}
