package server

import (
	"context"
	"net/http"
	"runtime"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"

	builtinapi "github.com/meshplane/meshplane/core/internal/apis/builtin"
	"github.com/meshplane/meshplane/core/internal/authorization"
	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/discovery"
	"github.com/meshplane/meshplane/core/internal/handlerchain"
	"github.com/meshplane/meshplane/core/internal/impersonation"
	"github.com/meshplane/meshplane/core/internal/openapi/clusterspec"
	"github.com/meshplane/meshplane/core/internal/server/bodylimits"
	"github.com/meshplane/meshplane/core/internal/server/listlimit"
	"github.com/meshplane/meshplane/core/internal/serviceaccount"
	"github.com/meshplane/meshplane/core/internal/tenancy/home"
	"github.com/meshplane/meshplane/core/internal/virtual/apiexportvw"
	"github.com/meshplane/meshplane/core/internal/virtual/apiresourceschemavw"
	"github.com/meshplane/meshplane/core/internal/virtual/lifecycle"
	"github.com/meshplane/meshplane/core/internal/virtual/myorgsvw"
)

// buildHandlerChain is the generic server's BuildHandlerChainFunc. From
// the outside in: the virtual workspace filters, the service-account
// rewrite (a request without a cluster goes to its token's cluster, as in
// kcp), the mounts filter (requests to mounted workspaces go through their
// own generic chain to the mount proxy, see mounts.go) and the cluster path
// filter (before the generic chain parses the request), the generic
// chain (handlerchain: authentication, audit, authorization, limits,
// deadlines), the cluster checks, the bounds on a write's body
// (bodylimits), and then the handlers: home workspace,
// discovery, OpenAPI, custom resources and finally apiHandler (the
// built-in APIs).
func (p *parts) buildHandlerChain(apiHandler http.Handler, c *genericapiserver.Config) http.Handler {
	crds := p.crdHandler.WithNext(apiHandler)
	openapi := &clusterspec.Handler{CRDs: p.crdIndex, Static: apiHandler, Next: crds}
	api := &discovery.Handler{CRDs: p.discoveredCRDs, Static: apiHandler, Next: apiexportvw.WithOpenAPI(openapi, p.exports, apiHandler)}
	homes := &home.Handler{Clients: p.reg.tenancyClients(), Bindings: p.reg.clusterRoleBindings, Index: p.index, Types: p.types,
		ExternalURL: p.externalURL, Codecs: builtinapi.Codecs, Next: apiexportvw.WithDiscovery(apiresourceschemavw.WithDiscovery(myorgsvw.WithDiscovery(api)), p.exports)}
	chain := handlerchain.Build(authorization.WithDeepReviews(withClusterChecks(listlimit.WithLimit(bodylimits.WithLimits(homes, builtinapi.Codecs), maxTenantLists))), c, p.signals)
	chain = impersonation.WithScope(chain)
	chain = handlerchain.WithShardLevelPaths(chain)
	chain = withBuiltinIdentities(chain, p.exports)
	chain = clusters.WithClusterPath(chain, builtinapi.Codecs, p.index.Resolve)
	chain = p.withMounts(chain, c)
	chain = serviceaccount.WithClusterFromToken(chain, clusters.Prefix, clusters.IsValidName)
	chain = apiexportvw.WithVirtualWorkspace(lifecycle.WithVirtualWorkspaces(chain), p.exports)
	chain = myorgsvw.WithVirtualWorkspace(chain, p.organizations())
	chain = apiresourceschemavw.WithVirtualWorkspace(chain, p.index.Resolve, p.boundSchemas)
	return p.withCacheServer(chain, c)
}

// organizations is the "myorgs" virtual workspace's lister, nil when off.
func (p *parts) organizations() myorgsvw.Lister {
	if p.config.Organizations == nil {
		return nil
	}
	return p.config.Organizations
}

// maxTenantLists is how many LISTs of users outside the system groups are
// served at once (listlimit): a few per CPU keep the CPUs busy without
// starving writes.
var maxTenantLists = 4 * runtime.GOMAXPROCS(0)

// discoveredCRDs is what discovery shows: in the APIExport virtual
// workspace the export's resources, elsewhere the cluster's CRDs and
// bound resources.
func (p *parts) discoveredCRDs(ctx context.Context, cluster string) []*apiextensionsv1.CustomResourceDefinition {
	if t, ok := apiexportvw.From(ctx); ok {
		crds, _ := p.exports.Resources(ctx, t.Cluster, t.Name)
		return crds
	}
	return p.crdIndex.List(cluster)
}

func (p *parts) etcdCheck() healthz.HealthChecker {
	return healthz.NamedCheck("etcd", func(r *http.Request) error { return p.backend.Ready(r.Context()) })
}
