package securityoperator

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
)

var shardsGVR = schema.GroupVersionResource{Group: "core.kcp.io", Version: "v1alpha1", Resource: "shards"}

// shardWatches runs watchBoundSources once per Shard listed in root, at
// the Shard's spec.baseURL with the root shard's credential and CA (the
// shards of one install share them): a shard serves /clusters/* only for
// the workspaces it hosts, and the front proxy refuses it.
type shardWatches struct {
	log     logr.Logger
	root    *rest.Config
	observe func(cluster, object string, present bool)

	mu      sync.Mutex
	running map[string]runningShard
}

type runningShard struct {
	baseURL string
	stop    context.CancelFunc
}

// watchBoundSourcesOfShards follows the Shards in root (reached at
// root's server) and watches each shard's APIBindings and CRDs while it
// is listed: started when a Shard appears, stopped when it goes or its
// baseURL changes, until ctx ends.
func watchBoundSourcesOfShards(ctx context.Context, log logr.Logger, root *rest.Config, observe func(cluster, object string, present bool)) error {
	u, err := url.Parse(root.Host)
	if err != nil || u.Host == "" {
		return fmt.Errorf("server URL %q: not a URL", root.Host)
	}
	cfg := rest.CopyConfig(root)
	cfg.Host, cfg.APIPath = u.Scheme+"://"+u.Host+"/clusters/root", ""
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	w := &shardWatches{log: log, root: root, observe: observe, running: map[string]runningShard{}}
	inf := dynamicinformer.NewFilteredDynamicInformer(dyn, shardsGVR, "", 0, toolscache.Indexers{}, nil).Informer()
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { w.shard(ctx, o, false) },
		UpdateFunc: func(_, o any) { w.shard(ctx, o, false) },
		DeleteFunc: func(o any) { w.shard(ctx, o, true) },
	}); err != nil {
		return err
	}
	go inf.Run(ctx.Done())
	return nil
}

func (w *shardWatches) shard(ctx context.Context, o any, deleted bool) {
	if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
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
	if old, ok := w.running[name]; ok {
		if !deleted && old.baseURL == baseURL {
			return
		}
		old.stop()
		delete(w.running, name)
		w.log.Info("stopped watching a shard's APIBindings and CRDs", "shard", name, "baseURL", old.baseURL)
	}
	if deleted || baseURL == "" {
		return
	}
	cfg := rest.CopyConfig(w.root)
	cfg.Host = baseURL
	sctx, stop := context.WithCancel(ctx)
	if err := watchBoundSources(sctx, cfg, w.observe); err != nil {
		stop()
		w.log.Error(err, "cannot watch a shard's APIBindings and CRDs", "shard", name, "baseURL", baseURL)
		return
	}
	w.running[name] = runningShard{baseURL: baseURL, stop: stop}
	w.log.Info("watching a shard's APIBindings and CRDs", "shard", name, "baseURL", baseURL)
}
