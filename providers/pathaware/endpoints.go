package pathaware

import (
	"context"
	"fmt"
	"slices"
	"time"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	"github.com/kcp-dev/logicalcluster/v3"
	mcpcache "github.com/kcp-dev/multicluster-provider/pkg/cache"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	conditionsv1alpha1 "github.com/kcp-dev/sdk/apis/third_party/conditions/apis/conditions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	"github.com/meshplane/meshplane/providers/endpointslice"
	"github.com/meshplane/meshplane/providers/scoped"
)

// endpoint is one virtual workspace URL of the slice (one per shard).
type endpoint struct {
	*scoped.Endpoint
	cancel context.CancelFunc
}

// engaged is a workspace handed to the manager.
type engaged struct {
	cl       *scoped.Cluster
	endpoint *endpoint
	cancel   context.CancelFunc // ends the manager's engagement
}

// index is a field index every endpoint's cache gets.
type index struct {
	obj     client.Object
	field   string
	extract client.IndexerFunc
}

// Start follows the endpoint slice until ctx ends: each of its URLs gets a
// wildcard cache, and each workspace with a Ready APIBinding there is
// engaged (asynchronously, see AsyncAware) as a view of that cache.
func (p *Provider) Start(ctx context.Context, aware multicluster.Aware) error {
	go p.res.run(ctx)
	aware = &AsyncAware{Inner: aware, Log: p.log, SlowAfter: p.slowEng}
	sliceSrc, err := cache.New(p.cfg, cache.Options{
		Scheme: p.scheme,
		ByObject: map[client.Object]cache.ByObject{
			&apisv1alpha1.APIExportEndpointSlice{}: {Field: fields.OneTermEqualSelector("metadata.name", p.slice)},
		},
	})
	if err != nil {
		return fmt.Errorf("cache of the endpoint slice %s: %w", p.slice, err)
	}
	inf, err := sliceSrc.GetInformer(ctx, &apisv1alpha1.APIExportEndpointSlice{}, cache.BlockUntilSynced(false))
	if err != nil {
		return err
	}
	onSlice := func(obj any) {
		if s, ok := obj.(*apisv1alpha1.APIExportEndpointSlice); ok && s.Name == p.slice {
			p.setEndpoints(ctx, aware, endpointslice.URLs(s))
		}
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    onSlice,
		UpdateFunc: func(_, obj any) { onSlice(obj) },
		DeleteFunc: func(any) { p.setEndpoints(ctx, aware, nil) },
	}); err != nil {
		return err
	}
	p.log.Info("starting provider", "slice", p.slice)
	err = sliceSrc.Start(ctx)
	p.setEndpoints(ctx, aware, nil)
	stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p.recorders.Stop(stop)
	return err
}

// IndexField indexes a field in every endpoint's cache, now and later.
func (p *Provider) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	p.mu.Lock()
	p.indexes = append(p.indexes, index{obj, field, extract})
	eps := make([]*endpoint, 0, len(p.endpoints))
	for _, e := range p.endpoints {
		eps = append(eps, e)
	}
	p.mu.Unlock()
	for _, e := range eps {
		if err := e.Cache().IndexField(ctx, obj, field, extract); err != nil {
			return fmt.Errorf("indexing %s of %T at %s: %w", field, obj, e.URL(), err)
		}
	}
	return nil
}

// setEndpoints starts the endpoints of urls not followed yet and stops
// (disengaging their workspaces) those no longer listed.
func (p *Provider) setEndpoints(ctx context.Context, aware multicluster.Aware, urls []string) {
	for _, url := range urls {
		p.mu.Lock()
		_, known := p.endpoints[url]
		p.mu.Unlock()
		if known {
			continue
		}
		e, err := p.startEndpoint(ctx, aware, url)
		if err != nil {
			p.log.Error(err, "following an endpoint of the slice failed", "url", url)
			continue
		}
		p.mu.Lock()
		p.endpoints[url] = e
		p.mu.Unlock()
	}
	p.mu.Lock()
	var gone []*endpoint
	for url, e := range p.endpoints {
		if !slices.Contains(urls, url) {
			gone = append(gone, e)
			delete(p.endpoints, url)
		}
	}
	var leaving []string
	for name, c := range p.clusters {
		if slices.Contains(gone, c.endpoint) {
			leaving = append(leaving, name)
		}
	}
	p.mu.Unlock()
	for _, name := range leaving {
		p.disengage(name)
	}
	for _, e := range gone {
		p.log.Info("endpoint left the slice", "url", e.URL())
		e.cancel()
	}
}

func (p *Provider) startEndpoint(ctx context.Context, aware multicluster.Aware, url string) (*endpoint, error) {
	cfg := endpointslice.ConfigFor(p.cfg, url)
	se, err := scoped.NewEndpoint(cfg, scoped.Options{
		Scheme:    p.scheme,
		Cache:     p.cacheOpts,
		Recorders: p.recorders,
		Informers: func(wc mcpcache.WildcardCache, name logicalcluster.Name) cache.Informers { return p.d.For(wc, name) },
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	e := &endpoint{Endpoint: se, cancel: cancel}
	p.mu.Lock()
	indexes := slices.Clone(p.indexes)
	p.mu.Unlock()
	for _, ix := range indexes {
		if err := se.Cache().IndexField(ctx, ix.obj, ix.field, ix.extract); err != nil {
			cancel()
			return nil, fmt.Errorf("indexing %s of %T: %w", ix.field, ix.obj, err)
		}
	}
	inf, err := se.Cache().GetInformer(ctx, &apisv1alpha1.APIBinding{}, cache.BlockUntilSynced(false))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("APIBinding informer: %w", err)
	}
	bindings, _, _, err := se.Cache().GetSharedInformer(&apisv1alpha1.APIBinding{})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("APIBinding informer: %w", err)
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if b, ok := obj.(*apisv1alpha1.APIBinding); ok && ready(b) {
				p.engage(ctx, aware, e, logicalcluster.From(b))
				p.handlers.RunOnAdd(b)
			}
		},
		UpdateFunc: func(old, obj any) {
			if b, ok := obj.(*apisv1alpha1.APIBinding); ok && ready(b) {
				p.engage(ctx, aware, e, logicalcluster.From(b))
				p.handlers.RunOnUpdate(old.(client.Object), b)
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			b, ok := obj.(*apisv1alpha1.APIBinding)
			if !ok {
				return
			}
			name := logicalcluster.From(b)
			if keys, err := bindings.GetIndexer().IndexKeys(kcpcache.ClusterIndexName, name.String()); err == nil && len(keys) > 0 {
				return // another binding of the export keeps the workspace
			}
			p.disengage(name.String())
			p.handlers.RunOnDelete(b)
		},
	}); err != nil {
		cancel()
		return nil, fmt.Errorf("APIBinding handler: %w", err)
	}
	go func() {
		if err := se.Cache().Start(ctx); err != nil {
			p.log.Error(err, "the endpoint's cache stopped", "url", url)
		}
	}()
	p.log.Info("following endpoint", "url", url)
	return e, nil
}

// engage hands workspace name to the manager once.
func (p *Provider) engage(ctx context.Context, aware multicluster.Aware, e *endpoint, name logicalcluster.Name) {
	p.mu.Lock()
	_, known := p.clusters[name.String()]
	p.mu.Unlock()
	if known {
		return
	}
	cl, err := e.Cluster(name)
	if err != nil {
		p.log.Error(err, "workspace view", "cluster", name)
		return
	}
	p.mu.Lock()
	if _, known := p.clusters[name.String()]; known {
		p.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	p.clusters[name.String()] = &engaged{cl: cl, endpoint: e, cancel: cancel}
	p.mu.Unlock()
	if err := aware.Engage(ctx, multicluster.ClusterName(name), cl); err != nil {
		p.log.Error(err, "engaging workspace failed", "cluster", name)
	}
}

// disengage ends the manager's engagement of workspace name.
func (p *Provider) disengage(name string) {
	p.mu.Lock()
	c, ok := p.clusters[name]
	delete(p.clusters, name)
	p.mu.Unlock()
	if !ok {
		return
	}
	c.cancel()
	stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p.recorders.StopProvider(stop, logicalcluster.Name(name))
}

// ready reports whether the binding's Ready condition is True.
func ready(b *apisv1alpha1.APIBinding) bool {
	for _, c := range b.Status.Conditions {
		if c.Type == conditionsv1alpha1.ReadyCondition {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
