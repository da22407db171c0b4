package scoped

import (
	"context"
	"errors"
	"net/http"

	"github.com/kcp-dev/logicalcluster/v3"
	mcpcache "github.com/kcp-dev/multicluster-provider/pkg/cache"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
)

// Cluster is one workspace of an Endpoint: a few pointers besides the
// endpoint's shared parts.
type Cluster struct {
	e      *Endpoint
	name   logicalcluster.Name
	cache  *Cache
	client *workspaceClient
}

var _ cluster.Cluster = &Cluster{}

// Name is the workspace's logical cluster.
func (c *Cluster) Name() logicalcluster.Name { return c.name }

// GetHTTPClient returns the endpoint's HTTP client (it serves every
// workspace; the URL names the workspace).
func (c *Cluster) GetHTTPClient() *http.Client { return c.e.http }

// GetConfig returns a config pointed at the workspace (a new copy on each
// call).
func (c *Cluster) GetConfig() *rest.Config {
	cfg := rest.CopyConfig(c.e.config)
	cfg.Host = c.client.base.String()
	return cfg
}

// GetScheme returns the endpoint's scheme.
func (c *Cluster) GetScheme() *runtime.Scheme { return c.e.scheme }

// GetFieldIndexer indexes fields of the shared wildcard cache (for every
// workspace; the cache keys the values by cluster).
func (c *Cluster) GetFieldIndexer() client.FieldIndexer { return c.cache }

// GetRESTMapper returns the endpoint's mapper, from the wildcard
// endpoint's discovery.
func (c *Cluster) GetRESTMapper() meta.RESTMapper { return c.e.mapper }

// GetCache returns the workspace's view of the wildcard cache.
func (c *Cluster) GetCache() cache.Cache { return c.cache }

// GetClient returns the workspace's client: typed reads from the cache
// view, everything else to the workspace through the shared client.
func (c *Cluster) GetClient() client.Client { return c.client }

// GetAPIReader returns a reader that asks the workspace, not the cache.
func (c *Cluster) GetAPIReader() client.Reader { return apiReader{c.client} }

// GetEventRecorderFor returns a recorder of events in the workspace; the
// workspace's broadcaster is made when first asked for.
//
// Deprecated: use GetEventRecorder.
func (c *Cluster) GetEventRecorderFor(name string) record.EventRecorder {
	return c.e.recorders.GetEventRecorderFor(c.e.config, logicalcluster.Name(name), c.name)
}

// GetEventRecorder returns a recorder of events in the workspace.
func (c *Cluster) GetEventRecorder(name string) events.EventRecorder {
	return c.e.recorders.GetEventRecorder(c.e.config, logicalcluster.Name(name), c.name)
}

// Start has nothing to run (the endpoint's cache runs once for all); it
// returns when ctx ends.
func (c *Cluster) Start(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// Cache is one workspace's view of the wildcard cache: reads through the
// cluster index, informers as Options.Informers gives them, indexes on
// the shared cache.
type Cache struct {
	*Reader
	cache.Informers
	wildcard mcpcache.WildcardCache
}

var _ cache.Cache = &Cache{}

// IndexField indexes a field of every workspace's objects in the shared
// cache (the wildcard cache adds each index once).
func (c *Cache) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	return c.wildcard.IndexField(ctx, obj, field, extract)
}

// WaitForCacheSync waits for the shared cache.
func (c *Cache) WaitForCacheSync(ctx context.Context) bool { return c.wildcard.WaitForCacheSync(ctx) }

// Start fails: the shared cache is started with its endpoint.
func (c *Cache) Start(context.Context) error {
	return errors.New("scoped: a workspace's cache view is not started on its own")
}

// RemoveInformer fails: the informers are shared by every workspace.
func (c *Cache) RemoveInformer(context.Context, client.Object) error {
	return errors.New("scoped: the informers of a workspace's cache view are shared; not removed")
}
