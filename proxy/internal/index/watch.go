package index

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"

	kcpinformers "github.com/kcp-dev/apimachinery/v2/third_party/informers"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

var (
	shardsGVR          = schema.GroupVersionResource{Group: "core.kcp.io", Version: "v1alpha1", Resource: "shards"}
	logicalClustersGVR = schema.GroupVersionResource{Group: "core.kcp.io", Version: "v1alpha1", Resource: "logicalclusters"}
	workspacesGVR      = schema.GroupVersionResource{Group: "tenancy.kcp.io", Version: "v1alpha1", Resource: "workspaces"}
)

// The annotations the index reads.
const (
	clusterAnnotation = "kcp.io/cluster"
	pathAnnotation    = "kcp.io/path"
)

// Watcher keeps an Index up to date.
type Watcher struct {
	Index *Index
	// Root reaches the root shard (its Shards); Shards holds the
	// credentials and CA used on every shard, whose URL is the Shard's
	// spec.baseURL.
	Root, Shards *rest.Config

	mu      sync.Mutex
	running map[string]*shardWatch
	synced  cache.InformerSynced
}

type shardWatch struct {
	baseURL string
	stop    context.CancelFunc
	synced  []cache.InformerSynced
}

// Run watches until ctx ends.
func (w *Watcher) Run(ctx context.Context) error {
	w.running = map[string]*shardWatch{}
	rootCfg, err := clusterConfig(w.Root, "root")
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(rootCfg)
	if err != nil {
		return err
	}
	inf := dynamicinformer.NewFilteredDynamicInformer(dyn, shardsGVR, "", 0, cache.Indexers{}, nil).Informer()
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { w.shard(ctx, o, false) },
		UpdateFunc: func(_, o any) { w.shard(ctx, o, false) },
		DeleteFunc: func(o any) { w.shard(ctx, o, true) },
	})
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.synced = inf.HasSynced
	w.mu.Unlock()
	inf.Run(ctx.Done())
	return nil
}

// HasSynced reports whether the Shards and every shard's objects were
// listed once.
func (w *Watcher) HasSynced() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.synced == nil || !w.synced() {
		return false
	}
	for _, s := range w.running {
		for _, f := range s.synced {
			if !f() {
				return false
			}
		}
	}
	return true
}

func (w *Watcher) shard(ctx context.Context, o any, deleted bool) {
	if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return
	}
	name := u.GetName()
	baseURL, _, _ := unstructured.NestedString(u.Object, "spec", "baseURL")
	log := klog.FromContext(ctx).WithValues("shard", name, "baseURL", baseURL)
	w.mu.Lock()
	defer w.mu.Unlock()
	if old, ok := w.running[name]; ok && (deleted || old.baseURL != baseURL) {
		old.stop()
		delete(w.running, name)
		w.Index.DropShardClusters(name)
	}
	if deleted || baseURL == "" {
		w.Index.SetShard(Shard{Name: name}, true)
		return
	}
	w.Index.SetShard(Shard{Name: name, BaseURL: strings.TrimSuffix(baseURL, "/")}, false)
	if _, ok := w.running[name]; ok {
		return
	}
	sw, err := w.watchShard(ctx, name, baseURL)
	if err != nil {
		log.Error(err, "Cannot watch shard")
		return
	}
	log.Info("Watching shard")
	w.running[name] = sw
}

// watchShard starts the wildcard watches on one shard.
func (w *Watcher) watchShard(parent context.Context, name, baseURL string) (*shardWatch, error) {
	cfg := rest.CopyConfig(w.Shards)
	cfg.Host = baseURL
	cfg, err := clusterConfig(cfg, "*")
	if err != nil {
		return nil, err
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(parent)
	// kcp's informers key objects by cluster too: every LogicalCluster is
	// named "cluster", and Workspaces of different clusters share names.
	lcRes := meta.Resource(logicalClustersGVR)
	lcs := kcpinformers.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return lcRes.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return lcRes.Watch(ctx, opts)
		},
	}, &metav1.PartialObjectMetadata{}, 0, cache.Indexers{})
	_, _ = lcs.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { w.cluster(name, o, false) },
		UpdateFunc: func(_, o any) { w.cluster(name, o, false) },
		DeleteFunc: func(o any) { w.cluster(name, o, true) },
	})
	wsRes := dyn.Resource(workspacesGVR)
	wss := kcpinformers.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return wsRes.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return wsRes.Watch(ctx, opts)
		},
	}, &unstructured.Unstructured{}, 0, cache.Indexers{})
	_, _ = wss.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { w.workspace(o, false) },
		UpdateFunc: func(_, o any) { w.workspace(o, false) },
		DeleteFunc: func(o any) { w.workspace(o, true) },
	})
	go lcs.Run(ctx.Done())
	go wss.Run(ctx.Done())
	return &shardWatch{baseURL: baseURL, stop: stop, synced: []cache.InformerSynced{lcs.HasSynced, wss.HasSynced}}, nil
}

func (w *Watcher) cluster(shard string, o any, deleted bool) {
	if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	m, ok := o.(interface{ GetAnnotations() map[string]string })
	if !ok {
		return
	}
	a := m.GetAnnotations()
	if a[clusterAnnotation] == "" {
		return
	}
	w.Index.SetCluster(shard, a[clusterAnnotation], a[pathAnnotation], deleted)
}

func (w *Watcher) workspace(o any, deleted bool) {
	if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return
	}
	parent := u.GetAnnotations()[clusterAnnotation]
	if parent == "" {
		return
	}
	_, mount, _ := unstructured.NestedMap(u.Object, "spec", "mount")
	w.Index.SetMounted(parent, u.GetName(), mount && !deleted)
}

// clusterConfig points cfg at /clusters/<cluster> of its server (whatever
// path the server URL had).
func clusterConfig(cfg *rest.Config, cluster string) (*rest.Config, error) {
	u, err := url.Parse(cfg.Host)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("server URL %q: not a URL", cfg.Host)
	}
	out := rest.CopyConfig(cfg)
	out.Host = u.Scheme + "://" + u.Host + "/clusters/" + cluster
	out.APIPath = ""
	return out, nil
}
