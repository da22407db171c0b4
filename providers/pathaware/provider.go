// Package pathaware is a multicluster-runtime provider of the workspaces
// that bind an APIExport, as kcp's multicluster-provider apiexport provider
// (v0.8) is, except that a cluster can be looked up by its workspace path
// ("root:orgs") as well as by its logical-cluster name, that one slow or
// broken workspace never stalls the others, and that a workspace costs a
// view of what its endpoint shares (package scoped), not clients of its
// own.
//
// The upstream provider runs its lifecycle handlers and the manager's
// Engage inside the informer's event handler: a handler that blocks (a
// lookup against a workspace that does not answer) holds up every cluster
// behind it. Here paths are resolved by a small pool of workers fed from a
// rate-limited queue, each lookup bounded by a timeout and retried with
// back-off, and Engage runs in its own goroutine per cluster.
package pathaware

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/kcp-dev/logicalcluster/v3"
	mcrecorder "github.com/kcp-dev/multicluster-provider/pkg/events/recorder"
	"github.com/kcp-dev/multicluster-provider/pkg/handlers"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	"github.com/meshplane/meshplane/providers/dispatch"
)

// PathAnnotation is kcp's annotation holding a logical cluster's canonical
// workspace path.
const PathAnnotation = "kcp.io/path"

// ResolveFunc returns the workspace path of a logical cluster.
type ResolveFunc func(ctx context.Context, cluster string) (string, error)

// NotPermittedError says the credential may not read what a path lookup
// needs (401 or 403): retrying soon will not help.
type NotPermittedError struct{ Err error }

func (e *NotPermittedError) Error() string { return e.Err.Error() }
func (e *NotPermittedError) Unwrap() error { return e.Err }

// notPermittedRetry is how long a lookup the credential may not make waits
// before it is tried again.
const notPermittedRetry = 10 * time.Minute

// notPermitted reports whether every error joined in err is a
// NotPermittedError.
func notPermitted(err error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !notPermitted(e) {
				return false
			}
		}
		return len(j.Unwrap()) > 0
	}
	var np *NotPermittedError
	return errors.As(err, &np)
}

// Options configure the provider.
type Options struct {
	// Scheme knows the controllers' types and apis.kcp.io v1alpha1's;
	// default: client-go's scheme.
	Scheme *runtime.Scheme
	// Log is the logger; default: discard.
	Log *logr.Logger
	// Handlers see the Ready APIBindings that announce workspaces (added,
	// updated, deleted), after the path bookkeeping.
	Handlers handlers.Handlers
	// WildcardCache are the options of every endpoint's wildcard cache
	// (its Scheme, HTTPClient and Mapper are the endpoint's). When its
	// DefaultTransform is nil, StoreTransform trims objects before they
	// are stored.
	WildcardCache cache.Options
	// Resolve looks a cluster's path up when the object that announced the
	// cluster (an APIBinding) does not carry kcp.io/path. Required.
	Resolve ResolveFunc
	// Workers resolve paths in parallel; default 4.
	Workers int
	// Timeout bounds one lookup; default 10s.
	Timeout time.Duration
	// SlowEngage is when an Engage still running is logged; default 30s.
	SlowEngage time.Duration
}

// Provider is a path-aware provider of the workspaces that bind an
// APIExport, by its APIExportEndpointSlice.
type Provider struct {
	slice     string
	cfg       *rest.Config
	scheme    *runtime.Scheme
	handlers  handlers.Handlers
	cacheOpts cache.Options
	recorders *mcrecorder.Manager

	paths   *Paths
	res     *resolver
	d       *dispatch.Dispatch
	log     logr.Logger
	slowEng time.Duration

	mu        sync.Mutex
	endpoints map[string]*endpoint
	clusters  map[string]*engaged
	indexes   []index
}

var (
	_ multicluster.Provider         = &Provider{}
	_ multicluster.ProviderRunnable = &Provider{}
)

// New creates the provider for the endpoint slice named slice in the
// workspace cfg points at.
func New(cfg *rest.Config, slice string, opts Options) (*Provider, error) {
	if opts.Resolve == nil {
		return nil, errors.New("pathaware: Options.Resolve is required")
	}
	log := logr.Discard()
	if opts.Log != nil {
		log = *opts.Log
	}
	if opts.Scheme == nil {
		opts.Scheme = scheme.Scheme
	}
	co := opts.WildcardCache
	if co.DefaultTransform == nil {
		co.DefaultTransform = StoreTransform
	}
	p := &Provider{slice: slice, cfg: cfg, scheme: opts.Scheme, cacheOpts: co,
		recorders: mcrecorder.NewManager(opts.Scheme, log.WithName("recorders")),
		paths:     NewPaths(), d: dispatch.New(opts.Scheme), log: log, slowEng: opts.SlowEngage,
		endpoints: map[string]*endpoint{}, clusters: map[string]*engaged{}}
	if p.slowEng <= 0 {
		p.slowEng = 30 * time.Second
	}
	p.res = newResolver(p.paths, opts.Resolve, opts.Workers, opts.Timeout, log.WithName("paths"))
	p.handlers = append(handlers.Handlers{p.res}, opts.Handlers...)
	return p, nil
}

// Dispatch routes the shared informers' events; its Watch follows a kind
// in every workspace at once.
func (p *Provider) Dispatch() *dispatch.Dispatch { return p.d }

// Get returns the engaged cluster named by a logical-cluster name or a
// workspace path.
func (p *Provider) Get(_ context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	if lc, ok := p.paths.Cluster(string(name)); ok {
		name = multicluster.ClusterName(lc)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if e, ok := p.clusters[string(name)]; ok {
		return e.cl, nil
	}
	return nil, fmt.Errorf("cluster %s: %w", name, multicluster.ErrClusterNotFound)
}

// Path returns the workspace path of a logical cluster, once known.
func (p *Provider) Path(cluster string) (string, bool) { return p.paths.Path(cluster) }

// Cluster returns the logical cluster of a workspace path, once known.
func (p *Provider) Cluster(path string) (string, bool) { return p.paths.Cluster(path) }

// AsyncAware engages each cluster in its own goroutine, once the cluster's
// cache has synced, so an Engage that blocks (a controller whose source
// cannot start for that cluster) holds up no other cluster. Errors are
// logged with the cluster's name.
type AsyncAware struct {
	Inner     multicluster.Aware
	Log       logr.Logger
	SlowAfter time.Duration
}

// Engage implements multicluster.Aware and returns at once.
func (a *AsyncAware) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	go func() {
		done := make(chan struct{})
		defer close(done)
		if a.SlowAfter > 0 {
			go func() {
				select {
				case <-done:
				case <-ctx.Done():
				case <-time.After(a.SlowAfter):
					a.Log.Info("engaging a cluster is slow; other clusters are not held up", "cluster", name, "after", a.SlowAfter)
				}
			}()
		}
		if cl != nil && !cl.GetCache().WaitForCacheSync(ctx) {
			return // disengaged (or stopped) before its cache synced
		}
		if err := a.Inner.Engage(ctx, name, cl); err != nil && ctx.Err() == nil {
			a.Log.Error(err, "engaging cluster failed", "cluster", name)
		}
	}()
	return nil
}

// Paths maps workspace paths to logical-cluster names and back.
type Paths struct {
	mu        sync.RWMutex
	byPath    map[string]string
	byCluster map[string]string
}

// NewPaths returns an empty map.
func NewPaths() *Paths {
	return &Paths{byPath: map[string]string{}, byCluster: map[string]string{}}
}

// Add records that cluster has path.
func (s *Paths) Add(path, cluster string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.byCluster[cluster]; ok && old != path {
		delete(s.byPath, old)
	}
	s.byPath[path] = cluster
	s.byCluster[cluster] = path
}

// Remove forgets a cluster.
func (s *Paths) Remove(cluster string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.byCluster[cluster]; ok && s.byPath[p] == cluster {
		delete(s.byPath, p)
	}
	delete(s.byCluster, cluster)
}

// Cluster returns the logical cluster of a path.
func (s *Paths) Cluster(path string) (string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, ok := s.byPath[path]
	return c, ok
}

// Path returns the path of a logical cluster.
func (s *Paths) Path(cluster string) (string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	p, ok := s.byCluster[cluster]
	return p, ok
}

// resolver is the provider's lifecycle handler: it never blocks the
// informer, handing lookups to its workers.
type resolver struct {
	paths   *Paths
	resolve ResolveFunc
	workers int
	timeout time.Duration
	log     logr.Logger
	queue   workqueue.TypedRateLimitingInterface[string]
}

func newResolver(paths *Paths, resolve ResolveFunc, workers int, timeout time.Duration, log logr.Logger) *resolver {
	if workers <= 0 {
		workers = 4
	}
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return &resolver{paths: paths, resolve: resolve, workers: workers, timeout: timeout, log: log,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](200*time.Millisecond, time.Minute),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "pathaware"})}
}

// OnAdd records the path at once when the object carries it, else queues
// a lookup.
func (r *resolver) OnAdd(obj client.Object) {
	cluster := logicalcluster.From(obj).String()
	if cluster == "" {
		return
	}
	if path := obj.GetAnnotations()[PathAnnotation]; path != "" {
		r.paths.Add(path, cluster)
		return
	}
	if _, known := r.paths.Path(cluster); !known {
		r.queue.Add(cluster)
	}
}

// OnUpdate is OnAdd for the new object.
func (r *resolver) OnUpdate(_, obj client.Object) { r.OnAdd(obj) }

// OnDelete forgets the cluster's path.
func (r *resolver) OnDelete(obj client.Object) {
	cluster := logicalcluster.From(obj).String()
	r.paths.Remove(cluster)
	r.queue.Forget(cluster)
}

func (r *resolver) run(ctx context.Context) {
	var wg sync.WaitGroup
	for range r.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r.next(ctx) {
			}
		}()
	}
	<-ctx.Done()
	r.queue.ShutDown()
	wg.Wait()
}

func (r *resolver) next(ctx context.Context) bool {
	cluster, shutdown := r.queue.Get()
	if shutdown {
		return false
	}
	defer r.queue.Done(cluster)
	if err := r.lookup(ctx, cluster); err != nil {
		if ctx.Err() != nil {
			return false
		}
		if notPermitted(err) {
			// A scoped credential may read LogicalClusters neither through
			// the virtual workspace nor directly; without this, every
			// workspace cost two refused requests every few seconds.
			r.log.V(1).Info("the credential may not look up the workspace path; trying again later", "cluster", cluster, "after", notPermittedRetry, "error", err.Error())
			r.queue.Forget(cluster)
			r.queue.AddAfter(cluster, notPermittedRetry)
			return true
		}
		r.log.V(1).Info("looking up the workspace path failed; retrying", "cluster", cluster, "error", err.Error())
		r.queue.AddRateLimited(cluster)
		return true
	}
	r.queue.Forget(cluster)
	return true
}

func (r *resolver) lookup(ctx context.Context, cluster string) error {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	path, err := r.resolve(ctx, cluster)
	if err != nil {
		return err
	}
	if path == "" {
		return fmt.Errorf("logical cluster %s has no %s annotation", cluster, PathAnnotation)
	}
	r.paths.Add(path, cluster)
	r.log.V(1).Info("workspace path known", "cluster", cluster, "path", path)
	return nil
}
