package sharding

import (
	"context"
	"net/url"
	"sync"
	"time"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	kcpinformers "github.com/kcp-dev/apimachinery/v2/third_party/informers"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/core/internal/cacheserver"
	"github.com/meshplane/meshplane/core/internal/tenancy"
)

// refreshShards is how often Others looks for shards that came or went
// (at once after Changed).
const refreshShards = 5 * time.Second

// Kind is a resource that shards read from each other.
type Kind struct {
	GVR schema.GroupVersionResource
	// New returns an empty typed object: the replicas hold typed objects.
	New func() runtime.Object
}

// The kinds every shard replicates from the others (docs/sharding.md):
// LogicalClusters (paths and children), the objects an APIBinding needs
// (exports, schemas), endpoint slices (each shard adds its URL) and
// WorkspaceTypes (types of workspaces made elsewhere) with their
// WorkspaceAuthenticationConfigurations (the issuers of a type's
// workspaces on every shard).
var (
	LogicalClusters    = Kind{corev1alpha1.SchemeGroupVersion.WithResource("logicalclusters"), func() runtime.Object { return &corev1alpha1.LogicalCluster{} }}
	APIExports         = Kind{apisv1alpha2.SchemeGroupVersion.WithResource("apiexports"), func() runtime.Object { return &apisv1alpha2.APIExport{} }}
	APIResourceSchemas = Kind{apisv1alpha1.SchemeGroupVersion.WithResource("apiresourceschemas"), func() runtime.Object { return &apisv1alpha1.APIResourceSchema{} }}
	EndpointSlices     = Kind{apisv1alpha1.SchemeGroupVersion.WithResource("apiexportendpointslices"), func() runtime.Object { return &apisv1alpha1.APIExportEndpointSlice{} }}
	WorkspaceTypes     = Kind{tenancyv1alpha1.SchemeGroupVersion.WithResource("workspacetypes"), func() runtime.Object { return &tenancyv1alpha1.WorkspaceType{} }}
	AuthConfigs        = Kind{tenancyv1alpha1.SchemeGroupVersion.WithResource("workspaceauthenticationconfigurations"),
		func() runtime.Object { return &tenancyv1alpha1.WorkspaceAuthenticationConfiguration{} }}
)

var replicated = append([]Kind{LogicalClusters, APIExports, APIResourceSchemas, EndpointSlices, WorkspaceTypes, AuthConfigs}, AdmissionKinds...)

// pathIndex indexes replicated LogicalClusters by their kcp.io/path.
const pathIndex = "path"

// Others replicates, from every other shard, the kinds shards need from
// each other: one wildcard informer per kind and shard on the shard's
// API (the shard admin's credentials), started for the shards found at
// Run and every refreshShards, or when a workspace is scheduled on one
// (Ensure). Its stores answer Get and Resolve; Source gives a kind's
// events (typed objects) to controllers.
type Others struct {
	shards *Shards

	mu       sync.Mutex
	ctx      context.Context
	handlers map[schema.GroupVersionResource][]cache.ResourceEventHandler
	running  map[string]*otherShard
	changed  chan struct{}
	// onShards are called when a shard is replicated or dropped.
	onShards []func()
	// listed is true once Run listed the Shards.
	listed bool
	// shardNames are the other shards last listed (with the cache server).
	shardNames map[string]bool
}

type otherShard struct {
	baseURL   string
	stop      context.CancelFunc
	informers map[schema.GroupVersionResource]cache.SharedIndexInformer
	// fromCache: the replica of every other shard, read from the cache
	// server; each object names its shard (kcp.io/shard).
	fromCache bool
}

// shardOf is the shard an object of the replica named name comes from.
func (r *otherShard) shardOf(name string, obj any) string {
	if !r.fromCache {
		return name
	}
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetAnnotations()[ShardAnnotation]
	}
	return ""
}

// informer is the replica's informer of kind (nil when it has none: the
// RBAC kinds are replicated from the cache server only).
func (r *otherShard) informer(kind Kind) cache.SharedIndexInformer { return r.informers[kind.GVR] }

// Others returns the replicas of the other shards.
func (s *Shards) Others() *Others {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.others == nil {
		s.others = &Others{shards: s, running: map[string]*otherShard{}, handlers: map[schema.GroupVersionResource][]cache.ResourceEventHandler{},
			changed: make(chan struct{}, 1)}
		registerMetrics(s.others)
	}
	return s.others
}

// AddEventHandler registers h for the events of every other shard's
// LogicalClusters.
func (o *Others) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return o.Source(LogicalClusters).AddEventHandler(h)
}

// Source is the event source of one kind on every other shard.
type Source struct {
	o    *Others
	kind Kind
}

// Source returns the event source of kind on every other shard.
func (o *Others) Source(kind Kind) Source { return Source{o: o, kind: kind} }

// AddEventHandler registers h; the objects already replicated are added
// to it at once.
func (s Source) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	s.o.mu.Lock()
	s.o.handlers[s.kind.GVR] = append(s.o.handlers[s.kind.GVR], h)
	var existing []any
	for _, r := range s.o.running {
		if inf := r.informer(s.kind); inf != nil {
			existing = append(existing, inf.GetStore().List()...)
		}
	}
	s.o.mu.Unlock()
	for _, obj := range existing {
		h.OnAdd(obj, true)
	}
	return nil, nil
}

// Run follows the shards until ctx ends.
func (o *Others) Run(ctx context.Context) {
	o.mu.Lock()
	o.ctx = ctx
	o.mu.Unlock()
	for {
		o.refresh(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(refreshShards):
		case <-o.changed:
		}
	}
}

// OnShardsChanged registers f, called when another shard comes or goes.
func (o *Others) OnShardsChanged(f func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.onShards = append(o.onShards, f)
}

func (o *Others) shardsChanged() {
	o.mu.Lock()
	fs := append([]func(){}, o.onShards...)
	o.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// Changed says the Shards changed: Run looks at them at once.
func (o *Others) Changed() {
	select {
	case o.changed <- struct{}{}:
	default:
	}
}

func (o *Others) refresh(ctx context.Context) {
	all, err := o.shards.List(ctx)
	if err != nil {
		klog.FromContext(ctx).Info("Cannot list shards", "err", err.Error())
		return
	}
	defer func() {
		o.mu.Lock()
		o.listed = true
		o.mu.Unlock()
	}()
	seen := map[string]bool{}
	for _, sh := range all {
		if sh.Name != o.shards.Self {
			seen[sh.Name] = true
			o.Ensure(sh.Name, sh.Spec.BaseURL)
		}
	}
	if o.shards.CacheServer != nil {
		o.followCache(seen)
		return
	}
	o.mu.Lock()
	dropped := false
	for name, r := range o.running {
		if !seen[name] {
			r.stop()
			delete(o.running, name)
			dropped = true
		}
	}
	o.mu.Unlock()
	if dropped {
		o.shardsChanged()
	}
}

// Ensure replicates shard name at baseURL (again, when its URL changed).
// Before Run it does nothing: Run's first listing does.
func (o *Others) Ensure(name, baseURL string) {
	if o.ensure(name, baseURL) {
		o.shardsChanged()
	}
}

// ensure is Ensure; it reports whether it started replicating.
func (o *Others) ensure(name, baseURL string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ctx == nil || name == o.shards.Self || o.shards.CacheServer != nil {
		return false
	}
	if r, ok := o.running[name]; ok {
		if r.baseURL == baseURL {
			return false
		}
		r.stop()
		delete(o.running, name)
	}
	log := klog.FromContext(o.ctx).WithValues("shard", name, "baseURL", baseURL)
	ctx, stop := context.WithCancel(o.ctx)
	r := &otherShard{baseURL: baseURL, stop: stop, informers: map[schema.GroupVersionResource]cache.SharedIndexInformer{}}
	for _, kind := range replicated {
		inf, err := o.informer(o.shards.Remote, baseURL+"/clusters/*", kind, false)
		if err != nil {
			stop()
			log.Error(err, "Cannot replicate a shard")
			return false
		}
		r.informers[kind.GVR] = inf
	}
	o.running[name] = r
	for _, inf := range r.informers {
		go inf.RunWithContext(ctx)
	}
	log.V(2).Info("Replicating a shard")
	return true
}

// HasSynced reports whether Run listed the Shards and every replica
// listed its shard once.
func (o *Others) HasSynced() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.listed {
		return false
	}
	for _, r := range o.running {
		for _, inf := range r.informers {
			if !inf.HasSynced() {
				return false
			}
		}
	}
	return true
}

// Get returns the replicated object of kind named name in cluster and the
// shard it is on.
func (o *Others) Get(kind Kind, cluster, name string) (runtime.Object, string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	key := kcpcache.ToClusterAwareKey(cluster, "", name)
	for shard, r := range o.running {
		inf := r.informer(kind)
		if inf == nil {
			continue
		}
		if obj, ok, _ := inf.GetIndexer().GetByKey(key); ok {
			return obj.(runtime.Object), r.shardOf(shard, obj), true
		}
	}
	return nil, "", false
}

// List returns the replicated objects of kind on every other shard, with
// the shard of each.
func (o *Others) List(kind Kind) map[string][]runtime.Object {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string][]runtime.Object{}
	for shard, r := range o.running {
		inf := r.informer(kind)
		if inf == nil {
			continue
		}
		for _, obj := range inf.GetStore().List() {
			on := r.shardOf(shard, obj)
			out[on] = append(out[on], obj.(runtime.Object))
		}
	}
	return out
}

// Count returns how many objects of kind each other shard holds.
func (o *Others) Count(kind Kind) map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string]int{}
	for shard, r := range o.running {
		inf := r.informer(kind)
		if inf == nil {
			continue
		}
		if !r.fromCache {
			out[shard] = len(inf.GetStore().ListKeys())
			continue
		}
		for _, obj := range inf.GetStore().List() {
			out[r.shardOf(shard, obj)]++
		}
	}
	return out
}

// Resolve returns the logical cluster of a workspace path held by another
// shard, and that shard.
func (o *Others) Resolve(path string) (cluster, shard string, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for name, r := range o.running {
		objs, _ := r.informers[LogicalClusters.GVR].GetIndexer().ByIndex(pathIndex, path)
		for _, obj := range objs {
			if lc, ok := obj.(*corev1alpha1.LogicalCluster); ok && lc.DeletionTimestamp == nil {
				return lc.Annotations[clusterAnnotation], r.shardOf(name, lc), true
			}
		}
	}
	return "", "", false
}

// ShardOf returns the other shard that holds a logical cluster.
func (o *Others) ShardOf(cluster string) (string, bool) {
	_, shard, ok := o.Get(LogicalClusters, cluster, corev1alpha1.LogicalClusterName)
	return shard, ok
}

// clusterAnnotation names an object's logical cluster.
const clusterAnnotation = "kcp.io/cluster"

// informer lists and watches kind in every cluster of the shard at
// baseURL; its store is keyed by cluster and name and holds typed
// objects.
func (o *Others) informer(base *rest.Config, host string, kind Kind, skipSelf bool) (cache.SharedIndexInformer, error) {
	u, err := url.Parse(host)
	if err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(base)
	cfg.Host = u.Scheme + "://" + u.Host + u.Path
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	res := dyn.Resource(kind.GVR)
	// p drops what a new listing no longer holds (set once the informer is).
	p := &pruner{}
	// listed are the keys of the listing under way (the reflector lists
	// one page after the other).
	var listed map[string]bool
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			list, err := res.List(ctx, opts)
			if err != nil {
				return list, err
			}
			kept := list.Items[:0]
			for _, it := range list.Items {
				if !skipSelf || it.GetAnnotations()[ShardAnnotation] != o.shards.Self {
					kept = append(kept, it)
				}
			}
			list.Items = kept
			// A listing may come in pages: prune after its last one.
			if opts.Continue == "" {
				listed = map[string]bool{}
			}
			for i := range list.Items {
				listed[keyOf(&list.Items[i])] = true
			}
			if list.GetContinue() == "" {
				p.prune(listed)
			}
			return list, nil
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			w, err := res.Watch(ctx, opts)
			if err != nil {
				return w, err
			}
			// A watch that lists first (sendInitialEvents): what it listed,
			// once the initial events end.
			var initial map[string]bool
			if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
				initial = map[string]bool{}
			}
			return watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
				m, err := meta.Accessor(e.Object)
				if err != nil || e.Type == watch.Error {
					return e, true
				}
				if e.Type == watch.Bookmark {
					if initial != nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
						p.prune(initial)
						initial = nil
					}
					return e, true
				}
				// This shard's own objects are not replicas.
				if skipSelf && m.GetAnnotations()[ShardAnnotation] == o.shards.Self {
					return e, false
				}
				if initial != nil && e.Type == watch.Added {
					initial[keyOf(e.Object)] = true
				}
				return e, true
			}), nil
		},
	}
	indexers := cache.Indexers{kcpcache.ClusterIndexName: kcpcache.ClusterIndexFunc}
	if kind.GVR == LogicalClusters.GVR {
		indexers[pathIndex] = func(obj any) ([]string, error) {
			// A path that does not fit the cluster's owner is not taken.
			if lc, ok := obj.(*corev1alpha1.LogicalCluster); ok && tenancy.PathFitsOwner(lc.Annotations[clusterAnnotation], lc) {
				return []string{lc.Annotations[tenancy.PathAnnotation]}, nil
			}
			return nil, nil
		}
	}
	inf := kcpinformers.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, indexers)
	if err := inf.SetTransform(func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		typed := kind.New()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
			return nil, err
		}
		if skipSelf {
			// A copy from the cache server has the resourceVersion of its
			// shard (what a write there must carry), not the cache's.
			if m, err := meta.Accessor(typed); err == nil {
				if rv := m.GetAnnotations()[cacheserver.SourceVersionAnnotation]; rv != "" {
					m.SetResourceVersion(rv)
				}
			}
		}
		return typed, nil
	}); err != nil {
		return nil, err
	}
	each := func(f func(h cache.ResourceEventHandler)) {
		o.mu.Lock()
		hs := append([]cache.ResourceEventHandler(nil), o.handlers[kind.GVR]...)
		o.mu.Unlock()
		for _, h := range hs {
			f(h)
		}
	}
	p.set(inf.GetIndexer(), func(obj any) { each(func(h cache.ResourceEventHandler) { h.OnDelete(obj) }) })
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { each(func(h cache.ResourceEventHandler) { h.OnAdd(obj, false) }) },
		UpdateFunc: func(old, obj any) { each(func(h cache.ResourceEventHandler) { h.OnUpdate(old, obj) }) },
		DeleteFunc: func(obj any) { each(func(h cache.ResourceEventHandler) { h.OnDelete(obj) }) },
	})
	return inf, err
}

// keyOf is an object's key in the replicas' stores.
func keyOf(obj any) string {
	k, _ := kcpcache.MetaClusterNamespaceKeyFunc(obj)
	return k
}

// pruner deletes from a replica's store the objects a new listing (a
// relist after a broken or expired watch) no longer holds, and tells the
// handlers. The informer would turn them into DeletedFinalStateUnknown,
// which the cluster-aware store of kcp's informer cannot key: without
// this, an object deleted while the watch was down stayed in the replica.
type pruner struct {
	mu       sync.Mutex
	store    cache.Indexer
	onDelete func(obj any)
}

func (p *pruner) set(store cache.Indexer, onDelete func(obj any)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.store, p.onDelete = store, onDelete
}

func (p *pruner) prune(listed map[string]bool) {
	p.mu.Lock()
	store, onDelete := p.store, p.onDelete
	p.mu.Unlock()
	if store == nil {
		return
	}
	for _, k := range store.ListKeys() {
		if listed[k] {
			continue
		}
		if obj, ok, _ := store.GetByKey(k); ok {
			if err := store.Delete(obj); err == nil {
				onDelete(obj)
			}
		}
	}
}
