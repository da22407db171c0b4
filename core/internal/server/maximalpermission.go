package server

import (
	"context"

	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/meshplane/meshplane/core/internal/authorization"
	"github.com/meshplane/meshplane/core/internal/authorization/maximalpermission"
	"github.com/meshplane/meshplane/core/internal/virtual/apiexportvw"
)

// maximalPermissionPolicy bounds what consumers do with bound resources
// by their export's policy; requests through the APIExport virtual
// workspace are the provider's and decided there. The policy is the RBAC
// of the export's cluster, asked of its shard (a deep review) when the
// export lives on another shard, as kcp asks it of the export's shard.
func (p *parts) maximalPermissionPolicy() authorizer.Authorizer {
	mpp := &maximalpermission.Authorizer{ExportsOf: p.consumers.ExportsOf, Export: p.exports.Export,
		RBAC: p.deepAcrossShards(authorization.NewBind(rbacSource(p.storage)))}
	return authorizer.AuthorizerFunc(func(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		if _, ok := apiexportvw.From(ctx); ok {
			return authorizer.DecisionNoOpinion, "", nil
		}
		return mpp.Authorize(ctx, a)
	})
}
