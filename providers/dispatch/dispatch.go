// Package dispatch routes the events of the provider's shared wildcard
// informers to the handlers of the one workspace an object belongs to.
//
// Upstream (multicluster-provider v0.8) gives every engaged workspace its
// own event handler on the shared informer of each watched kind, and each
// handler drops the events of other workspaces. Every event is therefore
// queued to, and filtered by, every workspace's handler: O(workspaces) work
// and buffer memory per event (measured: over half of the account-operator's
// CPU at 1,200 workspaces). Here each shared informer gets one handler,
// which looks the workspace's handlers up by the object's kcp.io/cluster.
package dispatch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	"github.com/kcp-dev/logicalcluster/v3"
	mcpcache "github.com/kcp-dev/multicluster-provider/pkg/cache"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Dispatch holds one dispatcher per shared informer.
type Dispatch struct {
	scheme *runtime.Scheme

	mu          sync.Mutex
	dispatchers map[toolscache.SharedIndexInformer]*dispatcher
	// caches are the wildcard caches seen so far (one per endpoint of
	// the slice), watches the handlers for every workspace, attached is
	// which watch is on which cache's informer.
	caches   []mcpcache.WildcardCache
	watches  []*watch
	attached map[attachment]bool
	// kinds are those workspaces' informers were asked for so far (by
	// Go type): a cache seen later (the endpoint of a shard that got its
	// first workspace) starts them all at once. Controllers engage a
	// workspace source by source, each waiting for its informer's sync
	// (multicluster-runtime), so on a new cache the informers otherwise
	// started one after the other.
	kinds map[string]client.Object
}

// watch is a handler of one kind in every workspace.
type watch struct {
	obj client.Object
	h   toolscache.ResourceEventHandler
	// errs receives the errors of attaching it to a new cache's informer.
	errs func(error)
}

type attachment struct {
	cache mcpcache.WildcardCache
	w     *watch
}

// New returns an empty Dispatch; scheme maps kinds to objects.
func New(scheme *runtime.Scheme) *Dispatch {
	return &Dispatch{scheme: scheme, dispatchers: map[toolscache.SharedIndexInformer]*dispatcher{},
		attached: map[attachment]bool{}, kinds: map[string]client.Object{}}
}

// For returns the view of wildcard for one workspace: its informers hand
// event handlers to the dispatcher instead of the shared informer. The
// first time a wildcard cache is seen, every Watch is attached to it.
func (d *Dispatch) For(wildcard mcpcache.WildcardCache, cluster logicalcluster.Name) mcpcache.WildcardCache {
	d.mu.Lock()
	var kinds []client.Object
	if !slices.Contains(d.caches, wildcard) {
		d.caches = append(d.caches, wildcard)
		for _, obj := range d.kinds {
			kinds = append(kinds, obj)
		}
	}
	d.mu.Unlock()
	d.attach()
	// The informers of every kind known, started together, not waited for.
	for _, obj := range kinds {
		_, _ = wildcard.GetInformer(context.Background(), obj, cache.BlockUntilSynced(false))
	}
	return &view{WildcardCache: wildcard, d: d, cluster: cluster.String()}
}

// remember notes a kind a workspace's informer was asked for.
func (d *Dispatch) remember(obj client.Object) {
	key := fmt.Sprintf("%T", obj)
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.kinds[key]; !ok {
		d.kinds[key] = obj.DeepCopyObject().(client.Object)
	}
}

// Watch adds h to the shared informer of obj's kind of every wildcard
// cache, now and as caches appear (a cache appears with the first
// workspace of its endpoint, and its informer hands h the objects it
// holds already). h sees the objects of every workspace, engaged or not
// yet; errs (may be nil) gets what fails when attaching to a later cache.
func (d *Dispatch) Watch(obj client.Object, h toolscache.ResourceEventHandler, errs func(error)) error {
	w := &watch{obj: obj, h: h, errs: errs}
	d.mu.Lock()
	d.watches = append(d.watches, w)
	d.mu.Unlock()
	return d.attach()
}

// attach puts every watch on every cache it is not on yet.
func (d *Dispatch) attach() error {
	d.mu.Lock()
	var todo []attachment
	for _, c := range d.caches {
		for _, w := range d.watches {
			if a := (attachment{c, w}); !d.attached[a] {
				d.attached[a] = true
				todo = append(todo, a)
			}
		}
	}
	d.mu.Unlock()
	var errs []error
	for _, a := range todo {
		if err := a.add(); err != nil {
			if a.w.errs != nil {
				a.w.errs(err)
			}
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (a attachment) add() error {
	// The informer is created (and started with the cache) if need be;
	// not waiting for its sync keeps the provider's handler unblocked.
	if _, err := a.cache.GetInformer(context.Background(), a.w.obj, cache.BlockUntilSynced(false)); err != nil {
		return fmt.Errorf("informer for %T: %w", a.w.obj, err)
	}
	inf, _, _, err := a.cache.GetSharedInformer(a.w.obj)
	if err != nil {
		return fmt.Errorf("informer for %T: %w", a.w.obj, err)
	}
	if _, err := inf.AddEventHandler(a.w.h); err != nil {
		return fmt.Errorf("handler for %T: %w", a.w.obj, err)
	}
	return nil
}

// Get reads obj's kind from the wildcard caches' stores (no request): the
// object named name in cluster, if any cache holds it.
func (d *Dispatch) Get(obj client.Object, cluster, name string) (any, bool) {
	d.mu.Lock()
	caches := slices.Clone(d.caches)
	d.mu.Unlock()
	for _, c := range caches {
		inf, _, _, err := c.GetSharedInformer(obj)
		if err != nil {
			continue
		}
		if o, ok, err := inf.GetIndexer().GetByKey(kcpcache.ToClusterAwareKey(cluster, "", name)); err == nil && ok {
			return o, true
		}
	}
	return nil, false
}

// GetCopy is Get for obj's typed kind: a copy of the object the wildcard
// caches hold (theirs is shared), if any.
func GetCopy[T client.Object](d *Dispatch, obj T, cluster, name string) (T, bool) {
	var zero T
	o, ok := d.Get(obj, cluster, name)
	if !ok {
		return zero, false
	}
	t, ok := o.(T)
	if !ok {
		return zero, false
	}
	return t.DeepCopyObject().(T), true
}

func (d *Dispatch) dispatcher(inf toolscache.SharedIndexInformer) *dispatcher {
	d.mu.Lock()
	defer d.mu.Unlock()
	ds, ok := d.dispatchers[inf]
	if !ok {
		ds = &dispatcher{inf: inf, handlers: map[string][]*registration{}}
		d.dispatchers[inf] = ds
	}
	return ds
}

// view is one workspace's view of a wildcard cache.
type view struct {
	mcpcache.WildcardCache
	d       *Dispatch
	cluster string
}

func (v *view) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	v.d.remember(obj)
	inf, err := v.WildcardCache.GetInformer(ctx, obj, opts...)
	if err != nil {
		return nil, err
	}
	shared, _, _, err := v.GetSharedInformer(obj)
	if err != nil {
		return nil, err
	}
	return &informer{Informer: inf, d: v.d.dispatcher(shared), cluster: v.cluster}, nil
}

func (v *view) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	inf, err := v.WildcardCache.GetInformerForKind(ctx, gvk, opts...)
	if err != nil {
		return nil, err
	}
	obj, err := v.d.scheme.New(gvk)
	if err != nil {
		return inf, nil // not a typed kind: the shared informer as it is
	}
	shared, _, _, err := v.GetSharedInformer(obj)
	if err != nil {
		return nil, err
	}
	return &informer{Informer: inf, d: v.d.dispatcher(shared), cluster: v.cluster}, nil
}

// informer is a shared informer seen from one workspace.
type informer struct {
	cache.Informer
	d       *dispatcher
	cluster string
}

func (i *informer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.d.add(i.cluster, h, i.Informer)
}

func (i *informer) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, _ time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.d.add(i.cluster, h, i.Informer)
}

func (i *informer) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, _ toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.d.add(i.cluster, h, i.Informer)
}

func (i *informer) RemoveEventHandler(handle toolscache.ResourceEventHandlerRegistration) error {
	if r, ok := handle.(*registration); ok {
		i.d.remove(r)
		return nil
	}
	return i.Informer.RemoveEventHandler(handle)
}

// dispatcher is the one handler on a shared informer.
type dispatcher struct {
	inf toolscache.SharedIndexInformer

	start sync.Once
	err   error

	mu       sync.RWMutex
	handlers map[string][]*registration
}

// registration is one workspace handler.
type registration struct {
	cluster string
	h       toolscache.ResourceEventHandler
	synced  cache.Informer
}

func (r *registration) HasSynced() bool { return r.synced.HasSynced() }

func (r *registration) HasSyncedChecker() toolscache.DoneChecker { return r.synced.HasSyncedChecker() }

// add registers h for cluster and hands it the cluster's objects already
// in the informer's store (as client-go does for a late handler). The
// dispatcher's own handler is on the informer first, and events wait for
// the lock while the store is replayed, so none is lost; one seen twice
// does no harm to level-triggered handlers.
func (d *dispatcher) add(cluster string, h toolscache.ResourceEventHandler, synced cache.Informer) (toolscache.ResourceEventHandlerRegistration, error) {
	d.start.Do(func() {
		_, d.err = d.inf.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
			AddFunc:    d.onAdd,
			UpdateFunc: d.onUpdate,
			DeleteFunc: d.onDelete,
		})
	})
	if d.err != nil {
		return nil, d.err
	}
	r := &registration{cluster: cluster, h: h, synced: synced}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.handlers[cluster] = append(d.handlers[cluster], r)
	objs, err := d.inf.GetIndexer().ByIndex(kcpcache.ClusterIndexName, cluster)
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		h.OnAdd(o, true)
	}
	return r, nil
}

func (d *dispatcher) remove(r *registration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	hs := d.handlers[r.cluster]
	for i, x := range hs {
		if x == r {
			hs = append(hs[:i:i], hs[i+1:]...)
			break
		}
	}
	if len(hs) == 0 {
		delete(d.handlers, r.cluster)
	} else {
		d.handlers[r.cluster] = hs
	}
}

// to returns the handlers of obj's workspace.
func (d *dispatcher) to(obj any) []*registration {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.handlers[logicalcluster.From(m).String()]
}

func (d *dispatcher) onAdd(obj any, initial bool) {
	for _, r := range d.to(obj) {
		r.h.OnAdd(obj, initial)
	}
}

func (d *dispatcher) onUpdate(old, obj any) {
	for _, r := range d.to(obj) {
		r.h.OnUpdate(old, obj)
	}
}

func (d *dispatcher) onDelete(obj any) {
	for _, r := range d.to(obj) {
		r.h.OnDelete(obj)
	}
}
