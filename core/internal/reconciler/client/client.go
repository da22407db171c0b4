// Package client is the seam between Meshplane's controllers and the
// objects they read and write: one small interface per resource, every
// call naming its logical cluster.
//
// The server implements it in process (registry/local.Client, which calls
// the registries directly): writes skip HTTP, and with it authorization,
// admission and audit, for speed. The decision is written down in
// docs/core.md ("How controllers write") and core/ARCHITECTURE.md. A
// loopback client (client-go against the server's own URL) could
// implement the same interface without touching a controller.
package client

import (
	"context"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// Reader reads one resource.
type Reader[T runtime.Object] interface {
	// Get reads the current object.
	Get(ctx context.Context, cluster, namespace, name string) (T, error)
	// GetCached may answer from a watch cache that lags a write by
	// milliseconds; for hot read paths.
	GetCached(ctx context.Context, cluster, namespace, name string) (T, error)
	// List lists a cluster's objects (namespace "" for all namespaces).
	List(ctx context.Context, cluster, namespace string, opts *metainternalversion.ListOptions) (runtime.Object, error)
}

// Writer writes one resource.
type Writer[T runtime.Object] interface {
	Create(ctx context.Context, cluster, namespace string, obj T) (T, error)
	// Update writes obj; its resourceVersion guards against lost updates.
	Update(ctx context.Context, cluster, namespace, name string, obj T) (T, error)
	UpdateStatus(ctx context.Context, cluster, namespace, name string, obj T) (T, error)
	Delete(ctx context.Context, cluster, namespace, name string) error
}

// Client reads and writes one resource.
type Client[T runtime.Object] interface {
	Reader[T]
	Writer[T]
}

// CachedOrLive reads an object from the watch cache, and from storage when
// the cache does not hold it (yet): an object created a moment ago is
// found either way. The object read from the cache is shared with it:
// callers deep-copy before changing it.
func CachedOrLive[T runtime.Object](ctx context.Context, r Reader[T], cluster, namespace, name string) (T, error) {
	obj, err := r.GetCached(ctx, cluster, namespace, name)
	if apierrors.IsNotFound(err) {
		return r.Get(ctx, cluster, namespace, name)
	}
	return obj, err
}

// StoredOrLive reads an object from an informer's store (kcp's cluster
// keys), and from storage when the store does not hold it. A controller
// reading what its informers' events name this way sees at least the
// version of the event (the watch cache may lag an informer that watches
// etcd directly). The object is the store's: callers deep-copy before
// changing it.
func StoredOrLive[T runtime.Object](ctx context.Context, store cache.Store, r Reader[T], cluster, namespace, name string) (T, error) {
	if obj, ok, err := store.GetByKey(kcpcache.ToClusterAwareKey(cluster, namespace, name)); err == nil && ok {
		if t, ok := obj.(T); ok {
			return t, nil
		}
	}
	return r.Get(ctx, cluster, namespace, name)
}
