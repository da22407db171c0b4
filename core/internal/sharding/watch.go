package sharding

import (
	"context"
	"net/url"
	"sync"
	"time"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// refreshShards is how often Others looks for shards that came or went.
const refreshShards = 30 * time.Second

// Others is one event source for the LogicalClusters of every other
// shard: a wildcard informer per shard, started when a workspace is
// scheduled there (Ensure) or found at start and every refreshShards.
// Events carry *corev1alpha1.LogicalCluster.
type Others struct {
	shards *Shards

	mu       sync.Mutex
	ctx      context.Context
	handlers []cache.ResourceEventHandler
	running  map[string]*otherShard
}

type otherShard struct {
	baseURL string
	stop    context.CancelFunc
}

// Others returns the event source of the other shards' LogicalClusters.
func (s *Shards) Others() *Others {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.others == nil {
		s.others = &Others{shards: s, running: map[string]*otherShard{}}
	}
	return s.others
}

// AddEventHandler registers h for the events of every other shard's
// LogicalClusters (before Run).
func (o *Others) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.handlers = append(o.handlers, h)
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
		}
	}
}

func (o *Others) refresh(ctx context.Context) {
	all, err := o.shards.List(ctx)
	if err != nil {
		klog.FromContext(ctx).Info("Cannot list shards", "err", err.Error())
		return
	}
	seen := map[string]bool{}
	for _, sh := range all {
		if sh.Name != o.shards.Self {
			seen[sh.Name] = true
			o.Ensure(sh.Name, sh.Spec.BaseURL)
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for name, r := range o.running {
		if !seen[name] {
			r.stop()
			delete(o.running, name)
		}
	}
}

// Ensure watches the LogicalClusters of shard name at baseURL (again, when
// its URL changed). Before Run it does nothing: Run's first listing does.
func (o *Others) Ensure(name, baseURL string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ctx == nil || name == o.shards.Self {
		return
	}
	if r, ok := o.running[name]; ok {
		if r.baseURL == baseURL {
			return
		}
		r.stop()
		delete(o.running, name)
	}
	log := klog.FromContext(o.ctx).WithValues("shard", name, "baseURL", baseURL)
	inf, err := o.informer(baseURL)
	if err != nil {
		log.Error(err, "Cannot watch the LogicalClusters of a shard")
		return
	}
	ctx, stop := context.WithCancel(o.ctx)
	o.running[name] = &otherShard{baseURL: baseURL, stop: stop}
	go inf.RunWithContext(ctx)
	log.V(2).Info("Watching the LogicalClusters of a shard")
}

func (o *Others) informer(baseURL string) (cache.SharedIndexInformer, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(o.shards.Remote)
	cfg.Host = u.Scheme + "://" + u.Host + "/clusters/*"
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	inf := dynamicinformer.NewFilteredDynamicInformer(dyn, corev1alpha1.SchemeGroupVersion.WithResource("logicalclusters"), "", 0, cache.Indexers{}, nil).Informer()
	typed := func(obj any) (any, bool) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return nil, false
		}
		lc := &corev1alpha1.LogicalCluster{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, lc); err != nil {
			return nil, false
		}
		return lc, true
	}
	each := func(f func(h cache.ResourceEventHandler)) {
		o.mu.Lock()
		hs := append([]cache.ResourceEventHandler(nil), o.handlers...)
		o.mu.Unlock()
		for _, h := range hs {
			f(h)
		}
	}
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if lc, ok := typed(obj); ok {
				each(func(h cache.ResourceEventHandler) { h.OnAdd(lc, false) })
			}
		},
		UpdateFunc: func(old, obj any) {
			if lc, ok := typed(obj); ok {
				each(func(h cache.ResourceEventHandler) { h.OnUpdate(lc, lc) })
			}
		},
		DeleteFunc: func(obj any) {
			if lc, ok := typed(obj); ok {
				each(func(h cache.ResourceEventHandler) { h.OnDelete(lc) })
			}
		},
	})
	return inf, err
}
