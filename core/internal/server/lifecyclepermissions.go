package server

import (
	"context"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/meshplane/meshplane/core/internal/virtual/lifecycle"
)

// lifecyclePermissions returns the initializerPermissions (or
// terminatorPermissions) of the workspace type typeName in typeCluster,
// which bound what its initializers (terminators) do inside a workspace
// through the lifecycle virtual workspaces.
func (p *parts) lifecyclePermissions(ctx context.Context, typeCluster, typeName string, kind lifecycle.Kind) ([]rbacv1.PolicyRule, error) {
	wt, err := p.types.Resolve(ctx, tenancyv1alpha1.WorkspaceTypeReference{Name: tenancyv1alpha1.WorkspaceTypeName(typeName), Path: typeCluster}, "")
	if err != nil {
		return nil, err
	}
	if kind == lifecycle.Terminating {
		return wt.Spec.TerminatorPermissions, nil
	}
	return wt.Spec.InitializerPermissions, nil
}
