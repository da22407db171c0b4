package systemstatus

import (
	"context"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/meshplane/meshplane/core/internal/authorization/privileged"
)

func TestAuthorize(t *testing.T) {
	alice := &user.DefaultInfo{Name: "alice", Groups: []string{user.AllAuthenticated}}
	kcpAdmin := &user.DefaultInfo{Name: "kcp-admin", Groups: []string{"system:kcp:admin", user.AllAuthenticated}}
	masters := &user.DefaultInfo{Name: "shard-admin", Groups: []string{user.SystemPrivilegedGroup}}
	req := func(u user.Info, verb, group, resource, sub string) authorizer.AttributesRecord {
		return authorizer.AttributesRecord{User: u, Verb: verb, APIGroup: group, Resource: resource, Subresource: sub, ResourceRequest: true}
	}
	for _, tc := range []struct {
		what         string
		attrs        authorizer.AttributesRecord
		impersonated bool
		want         authorizer.Decision
	}{
		{"tenant patches an APIExport's status", req(alice, "patch", "apis.kcp.io", "apiexports", "status"), false, authorizer.DecisionDeny},
		{"tenant reads an APIBinding's status subresource", req(alice, "get", "apis.kcp.io", "apibindings", "status"), false, authorizer.DecisionDeny},
		{"kcp-admin updates an APIBinding's status", req(kcpAdmin, "update", "apis.kcp.io", "apibindings", "status"), false, authorizer.DecisionDeny},
		{"tenant patches a WorkspaceType's status", req(alice, "patch", "tenancy.kcp.io", "workspacetypes", "status"), false, authorizer.DecisionDeny},
		{"tenant updates a Workspace's status", req(alice, "update", "tenancy.kcp.io", "workspaces", "status"), false, authorizer.DecisionDeny},
		{"tenant patches an endpoint slice's status", req(alice, "patch", "apis.kcp.io", "apiexportendpointslices", "status"), false, authorizer.DecisionDeny},
		{"tenant reads a Workspace's status", req(alice, "get", "tenancy.kcp.io", "workspaces", "status"), false, authorizer.DecisionNoOpinion},
		{"tenant patches a Workspace", req(alice, "patch", "tenancy.kcp.io", "workspaces", ""), false, authorizer.DecisionNoOpinion},
		{"tenant patches a LogicalCluster's status", req(alice, "patch", "core.kcp.io", "logicalclusters", "status"), false, authorizer.DecisionNoOpinion},
		{"tenant patches a Namespace's status", req(alice, "patch", "", "namespaces", "status"), false, authorizer.DecisionNoOpinion},
		{"kcp-admin patches a Workspace's status (kcp's tenancy policy grants it)", req(kcpAdmin, "patch", "tenancy.kcp.io", "workspaces", "status"), false, authorizer.DecisionNoOpinion},
		{"impersonated kcp-admin patches a Workspace's status", req(kcpAdmin, "patch", "tenancy.kcp.io", "workspaces", "status"), true, authorizer.DecisionDeny},
		{"kcp-admin patches an endpoint slice's status", req(kcpAdmin, "patch", "apis.kcp.io", "apiexportendpointslices", "status"), false, authorizer.DecisionDeny},
		{"system:masters patches an APIExport's status", req(masters, "patch", "apis.kcp.io", "apiexports", "status"), false, authorizer.DecisionNoOpinion},
		{"impersonated system:masters patches an APIExport's status", req(masters, "patch", "apis.kcp.io", "apiexports", "status"), true, authorizer.DecisionDeny},
	} {
		ctx := context.Background()
		if tc.impersonated {
			ctx = privileged.WithImpersonated(ctx)
		}
		got, reason, _ := Authorizer.Authorize(ctx, tc.attrs)
		if got != tc.want || (got == authorizer.DecisionDeny && reason == "") {
			t.Errorf("%s: decision %v (%q), want %v", tc.what, got, reason, tc.want)
		}
	}
}
