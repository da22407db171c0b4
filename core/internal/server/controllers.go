package server

import (
	"context"
	"fmt"
	"reflect"
	"runtime/debug"
	"time"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/internal/apiexport"
	apibindingcontroller "github.com/meshplane/meshplane/core/internal/controllers/apibinding"
	apiexportcontroller "github.com/meshplane/meshplane/core/internal/controllers/apiexport"
	"github.com/meshplane/meshplane/core/internal/controllers/defaultapibindings"
	"github.com/meshplane/meshplane/core/internal/controllers/logicalcluster"
	"github.com/meshplane/meshplane/core/internal/controllers/namespace"
	"github.com/meshplane/meshplane/core/internal/controllers/universal"
	workspacecontroller "github.com/meshplane/meshplane/core/internal/controllers/workspace"
	"github.com/meshplane/meshplane/core/internal/controllers/workspacetype"
	"github.com/meshplane/meshplane/core/internal/crd"
	"github.com/meshplane/meshplane/core/internal/registry/wildcard"
	"github.com/meshplane/meshplane/core/internal/sharding"
	"github.com/meshplane/meshplane/core/internal/tenancy"
)

// controller is the shape of every controller: built complete by its
// package's New, it works from Run until ctx is done.
type controller interface {
	Run(ctx context.Context)
}

// informers are the cross-cluster informers the controllers follow, one
// per resource, started together.
type informers map[reflect.Type]cache.SharedIndexInformer

func (i informers) of(st wildcard.Storage, example runtime.Object) cache.SharedIndexInformer {
	t := reflect.TypeOf(example)
	if i[t] == nil {
		i[t] = wildcard.NewInformer(st, example)
	}
	return i[t]
}

func (i informers) start(ctx context.Context) {
	for _, inf := range i {
		go inf.RunWithContext(ctx)
	}
}

// startControllers is the post-start hook: the controllers that need no
// root workspace, then root's bootstrap, then the workspace tree's.
func (p *parts) startControllers(ctx context.Context) error {
	inf := p.informers
	first := []controller{p.installCRD(), p.installNamespace(inf), p.installAPIExport(inf), p.installPermissionClaimLabel(), p.installAPIBinding(inf),
		p.installDefaultAPIBindings(), p.installServiceAccounts(inf), p.installClusterRoleAggregation(inf),
		p.installResourceQuota(inf), p.installGarbageCollector(), p.installPolicyStatus(inf)}
	if p.sharding.shards.CacheServer != nil {
		// Built before the informers start (it indexes them), run once the
		// shard is registered (replicateOtherShards).
		w, err := p.cacheWriter(inf)
		if err != nil {
			return err
		}
		p.sharding.writer = w
	}
	afterRoot := []controller{p.installWorkspace(inf), p.installLogicalCluster(), p.installUniversal(), p.installWorkspaceType(inf),
		p.installWorkspaceMount(inf)}
	go p.crdIndex.Run(ctx)
	inf.start(ctx)
	for _, c := range first {
		go c.Run(ctx)
	}
	freeOSMemoryAfterStart(ctx)
	if err := p.bootstrapRoot(ctx); err != nil {
		return err
	}
	for _, c := range afterRoot {
		go c.Run(ctx)
	}
	p.replicateOtherShards(ctx, inf)
	return nil
}

// freeOSMemoryAfterStart hands the garbage start-up leaves behind
// (OpenAPI specs, registries) back to the OS once, so idle memory is what
// serving needs.
func freeOSMemoryAfterStart(ctx context.Context) {
	go func() {
		select {
		case <-time.After(2 * time.Second):
			debug.FreeOSMemory()
		case <-ctx.Done():
		}
	}()
}

// bootstrapRoot creates root and waits until it resolves: the server is
// not ready before.
// A shard other than root only registers itself in root.
func (p *parts) bootstrapRoot(ctx context.Context) error {
	go p.index.Informer().RunWithContext(ctx)
	if p.isRootShard() {
		if err := tenancy.Bootstrap(ctx, p.reg.tenancyClients(), p.externalURL); err != nil {
			return err
		}
		if err := apiexport.EnsureRootExports(ctx, p.reg.exports); err != nil {
			return err
		}
	}
	if err := p.sharding.register(ctx); err != nil {
		return fmt.Errorf("registering shard %s: %w", p.config.Options.ShardName, err)
	}
	if !cache.WaitForCacheSync(ctx.Done(), p.index.HasSynced) {
		return fmt.Errorf("logical cluster index did not sync")
	}
	if !p.isRootShard() {
		return nil
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, ok := p.index.Resolve("root")
		return ok, nil
	}); err != nil {
		return fmt.Errorf("root logical cluster not indexed: %w", err)
	}
	return nil
}

func (p *parts) installCRD() controller {
	return crd.NewController(p.crds, customresourcedefinition.NewStatusREST(apiextensionsapiserver.Scheme, p.crds), p.crdHandler)
}

func (p *parts) installNamespace(inf informers) controller {
	builtinContents := namespacedContents(p.storage)
	contents := func(cluster string) []namespace.Content {
		out := builtinContents
		for _, c := range p.crdHandler.NamespacedContents(cluster) {
			out = append(out, c)
		}
		return out
	}
	namespaces := p.reg.namespaceStore
	return namespace.New(namespaces, p.reg.namespaceFinalize, contents, inf.of(namespaces, &corev1.Namespace{}))
}

func (p *parts) installAPIExport(inf informers) controller {
	shards := p.sharding.shards
	return apiexportcontroller.New(p.reg.exports, sharding.WithReplicas(p.reg.exports, shards, sharding.APIExports), p.reg.slices,
		p.reg.secrets, p.reg.namespaces, p.index, p.consumers, p.config.Options.ShardBaseURL,
		inf.of(p.reg.exports.Storage, &apisv1alpha2.APIExport{}), inf.of(p.reg.slices.Storage, &apisv1alpha1.APIExportEndpointSlice{}), p.otherSlices())
}

func (p *parts) installAPIBinding(inf informers) controller {
	shards := p.sharding.shards
	return apibindingcontroller.New(p.reg.bindings, sharding.WithReplicas(p.reg.exports, shards, sharding.APIExports),
		sharding.WithReplicas(p.reg.schemas, shards, sharding.APIResourceSchemas), p.index, p.crdIndex, p.consumers, p.deleteBound, p.boundRemaining,
		inf.of(p.reg.bindings.Storage, &apisv1alpha2.APIBinding{}), inf.of(p.reg.exports.Storage, &apisv1alpha2.APIExport{}),
		sharding.Resolver(p.index.Resolve, shards), shards.Others().Source(sharding.APIExports))
}

func (p *parts) installDefaultAPIBindings() controller {
	shards := p.sharding.shards
	c := defaultapibindings.New(p.reg.tenancyClients(), p.index, p.types, p.reg.bindings, sharding.WithReplicas(p.reg.exports, shards, sharding.APIExports))
	c.Resolve = sharding.Resolver(p.index.Resolve, shards)
	return c
}

func (p *parts) installWorkspace(inf informers) controller {
	return workspacecontroller.New(p.reg.workspaces, p.reg.logicalClusters, p.reg.clusterRoleBindings, p.index, p.types, p.externalURL,
		p.sharding.shards, inf.of(p.reg.workspaces.Storage, &tenancyv1alpha1.Workspace{}))
}

func (p *parts) installLogicalCluster() controller {
	// The LogicalCluster itself stays until its finalizer goes.
	keep := map[string]bool{"/" + corev1alpha1.SchemeGroupVersion.Group + "/logicalclusters": true}
	return logicalcluster.New(p.reg.logicalClusters, p.reg.workspaces, p.index, p.deleteClusterContent, func(ctx context.Context, cluster string) error {
		return p.backend.PurgeCluster(ctx, cluster, crdPrefixes(p.crdIndex, cluster), keep)
	})
}

func (p *parts) installUniversal() controller {
	return universal.New(p.reg.tenancyClients(), p.index)
}

func (p *parts) installWorkspaceType(inf informers) controller {
	shards := p.sharding.shards
	return workspacetype.New(p.reg.workspaceTypes, shards.List, shards.Others().OnShardsChanged, inf.of(p.reg.workspaceTypes.Storage, &tenancyv1alpha1.WorkspaceType{}))
}
