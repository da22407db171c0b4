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

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/runtime"
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
