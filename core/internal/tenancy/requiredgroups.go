package tenancy

import (
	"context"

	"github.com/meshplane/meshplane/core/internal/authorization/requiredgroups"
)

type requiredGroupsKey struct{}

// WithRequiredGroups carries to CreateLogicalClusterOn the required-groups
// annotation of the Workspace whose LogicalCluster is being created (kcp
// copies it there, where the authorizer reads it).
func WithRequiredGroups(ctx context.Context, groups string) context.Context {
	if groups == "" {
		return ctx
	}
	return context.WithValue(ctx, requiredGroupsKey{}, groups)
}

func requiredGroupsFrom(ctx context.Context) string {
	g, _ := ctx.Value(requiredGroupsKey{}).(string)
	return g
}

// RequiredGroupsAnnotation is requiredgroups.Annotation.
const RequiredGroupsAnnotation = requiredgroups.Annotation
