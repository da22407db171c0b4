package server

import (
	"context"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/meshplane/meshplane/core/internal/reconciler/client"
	"github.com/meshplane/meshplane/core/internal/sharding"
	"github.com/meshplane/meshplane/core/internal/virtual/lifecycle"
)

// lifecyclePermissions returns the initializerPermissions (or
// terminatorPermissions) of the workspace type typeName in the logical
// cluster typeCluster (this shard's or, with shards, the replica of
// another's), which bound what its initializers (terminators) do inside a
// workspace through the lifecycle virtual workspaces.
func (p *parts) lifecyclePermissions(ctx context.Context, typeCluster, typeName string, kind lifecycle.Kind) ([]rbacv1.PolicyRule, error) {
	types := sharding.WithReplicas(p.reg.workspaceTypes, p.sharding.shards, sharding.WorkspaceTypes)
	wt, err := client.CachedOrLive[*tenancyv1alpha1.WorkspaceType](ctx, types, typeCluster, "", typeName)
	if err != nil {
		return nil, err
	}
	if kind == lifecycle.Terminating {
		return wt.Spec.TerminatorPermissions, nil
	}
	return wt.Spec.InitializerPermissions, nil
}
