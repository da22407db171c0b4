// Package shards follows the Shards of a sharded install (the Shard
// objects in root) and runs something per shard for as long as the shard
// is listed: the gateway's watches of each shard's APIBindings and CRDs,
// which cannot go through the front proxy (it refuses /clusters/*).
package shards

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/gateway/internal/kube"
)

var shardsGVR = schema.GroupVersionResource{Group: "core.kcp.io", Version: "v1alpha1", Resource: "shards"}

// Watcher runs Start once per listed shard.
type Watcher struct {
	// Root reaches the root shard as the shard admin; its credentials and
	// CA are used on every shard (shards of one install share them), at
	// the Shard's spec.baseURL.
	Root *rest.Config
	// Start runs until ctx ends: the shard was deleted, its baseURL
	// changed, or the watcher stopped.
	Start func(ctx context.Context, shard string, c *kube.Client)

	mu      sync.Mutex
	running map[string]*running
}

type running struct {
	baseURL string
	stop    context.CancelFunc
}

// Run follows the Shards until ctx ends.
func (w *Watcher) Run(ctx context.Context) error {
	u, err := url.Parse(w.Root.Host)
	if err != nil || u.Host == "" {
		return fmt.Errorf("server URL %q: not a URL", w.Root.Host)
	}
	cfg := rest.CopyConfig(w.Root)
	cfg.Host, cfg.APIPath = u.Scheme+"://"+u.Host+"/clusters/root", ""
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	inf := dynamicinformer.NewFilteredDynamicInformer(dyn, shardsGVR, "", 0, cache.Indexers{}, nil).Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { w.shard(ctx, o, false) },
		UpdateFunc: func(_, o any) { w.shard(ctx, o, false) },
		DeleteFunc: func(o any) { w.shard(ctx, o, true) },
	}); err != nil {
		return err
	}
	inf.Run(ctx.Done())
	return nil
}

// Count is the number of shards being followed.
func (w *Watcher) Count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.running)
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
	baseURL = strings.TrimSuffix(baseURL, "/")
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running == nil {
		w.running = map[string]*running{}
	}
	if old, ok := w.running[name]; ok {
		if !deleted && old.baseURL == baseURL {
			return
		}
		old.stop()
		delete(w.running, name)
		klog.InfoS("stopped following a shard", "shard", name, "baseURL", old.baseURL)
	}
	if deleted || baseURL == "" {
		return
	}
	cfg := rest.CopyConfig(w.Root)
	cfg.Host = baseURL
	c, err := kube.New(cfg)
	if err != nil {
		klog.ErrorS(err, "cannot reach a shard", "shard", name, "baseURL", baseURL)
		return
	}
	sctx, stop := context.WithCancel(ctx)
	w.running[name] = &running{baseURL: baseURL, stop: stop}
	klog.InfoS("following a shard", "shard", name, "baseURL", baseURL)
	go w.Start(sctx, name, c)
}
