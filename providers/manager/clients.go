package manager

import (
	"context"
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
)

// clients hands out one client per engaged workspace that reads from the
// workspace's view of the shared wildcard cache and writes through the
// virtual workspace, all sharing one HTTP client (one connection pool) and
// one REST mapper. Every workspace behind an export's virtual workspace
// serves the same exported and claimed resources, so one mapper (built
// from the wildcard endpoint's discovery) answers for all; upstream gives
// each workspace's client its own discovery mapper (~50 KB each once used).
type clients struct {
	vw *rest.Config

	once   sync.Once
	err    error
	http   *http.Client
	mapper meta.RESTMapper

	mu  sync.Mutex
	all map[string]entry
}

type entry struct {
	cluster cluster.Cluster
	client  client.Client
}

func (c *clients) init() error {
	c.once.Do(func() {
		if c.http, c.err = rest.HTTPClientFor(c.vw); c.err != nil {
			return
		}
		wildcard := rest.CopyConfig(c.vw)
		wildcard.Host += "/clusters/*"
		c.mapper, c.err = apiutil.NewDynamicRESTMapper(wildcard, c.http)
	})
	return c.err
}

// Client returns the client of an engaged workspace (by logical-cluster
// name or path), creating it on first use; a workspace engaged anew gets a
// new one.
func (k *Kit) Client(ctx context.Context, name string) (client.Client, error) {
	cl, err := k.Manager.GetCluster(ctx, multicluster.ClusterName(name))
	if err != nil {
		return nil, err
	}
	c := k.clients
	if err := c.init(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.all[name]; ok && e.cluster == cl {
		return e.client, nil
	}
	cfg := rest.CopyConfig(cl.GetConfig())
	cli, err := client.New(cfg, client.Options{Scheme: cl.GetScheme(), HTTPClient: c.http, Mapper: c.mapper,
		Cache: &client.CacheOptions{Reader: cl.GetCache()}})
	if err != nil {
		return nil, err
	}
	if c.all == nil {
		c.all = map[string]entry{}
	}
	c.all[name] = entry{cluster: cl, client: cli}
	return cli, nil
}
