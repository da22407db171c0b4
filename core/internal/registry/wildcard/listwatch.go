// Package wildcard lets in-process controllers list and watch a registry
// across all logical clusters, without going through HTTP.
package wildcard

import (
	"context"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/tools/cache"

	kcpinformers "github.com/kcp-dev/apimachinery/v2/third_party/informers"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// Storage is a registry that lists and watches.
type Storage interface {
	rest.Lister
	rest.Watcher
}

// ListWatch lists and watches storage in every cluster. Objects come out
// as stored (each carries its kcp.io/cluster annotation), never wrapped by
// the watch cache.
func ListWatch(storage Storage) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return storage.List(clusters.WithCluster(ctx, clusters.Wildcard), internal(opts))
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			w, err := storage.Watch(clusters.WithCluster(ctx, clusters.Wildcard), internal(opts))
			if err != nil {
				return nil, err
			}
			return watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
				if c, ok := e.Object.(runtime.CacheableObject); ok {
					e.Object = c.GetObject()
				}
				return e, true
			}), nil
		},
	}
}

func internal(in metav1.ListOptions) *metainternalversion.ListOptions {
	out := &metainternalversion.ListOptions{}
	// The conversion only copies fields and parses selectors; selectors
	// built by informers always parse.
	_ = metainternalversion.Convert_v1_ListOptions_To_internalversion_ListOptions(&in, out, nil)
	return out
}

// NewInformer returns an informer over storage in every cluster. Its
// store keys objects by cluster, namespace and name (kcp's key function,
// reading the kcp.io/cluster annotation), so same-named objects of
// different clusters never overwrite each other.
func NewInformer(storage Storage, example runtime.Object) cache.SharedIndexInformer {
	return kcpinformers.NewSharedIndexInformer(ListWatch(storage), example, 0, cache.Indexers{})
}

// Mirror calls set for every object the informer adds, updates or deletes
// (deleted true), unwrapping tombstones: how in-memory indexes follow it.
func Mirror(informer cache.SharedIndexInformer, set func(obj any, deleted bool)) {
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { set(obj, false) },
		UpdateFunc: func(_, obj any) { set(obj, false) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			set(obj, true)
		},
	})
}

// NewFilteredInformer is NewInformer limited to the objects a field
// selector (such as "metadata.name=kube-root-ca.crt") matches: for
// controllers that follow a few objects of a large resource.
func NewFilteredInformer(storage Storage, example runtime.Object, fieldSelector string) cache.SharedIndexInformer {
	lw := ListWatch(storage)
	list, watchFn := lw.ListWithContextFunc, lw.WatchFuncWithContext
	lw.ListWithContextFunc = func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		opts.FieldSelector = fieldSelector
		return list(ctx, opts)
	}
	lw.WatchFuncWithContext = func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		opts.FieldSelector = fieldSelector
		return watchFn(ctx, opts)
	}
	return kcpinformers.NewSharedIndexInformer(lw, example, 0, cache.Indexers{})
}
