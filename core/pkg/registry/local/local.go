// Package local gives in-process controllers a small client over the
// registries: every call names its logical cluster and runs through the
// same strategies, validation and storage as API requests, without HTTP.
package local

import (
	"context"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/meshplane/meshplane/core/pkg/clusters"
	"github.com/meshplane/meshplane/core/pkg/reconciler/client"
)

// Storage is a full registry.
type Storage interface {
	rest.StandardStorage
}

// Client reads and writes one resource in process; it implements
// reconciler/client.Client.
type Client[T runtime.Object] struct {
	Storage Storage
	// Status is the status subresource (nil if none).
	Status rest.Updater
}

// Context returns ctx aimed at cluster and namespace.
func Context(ctx context.Context, cluster, namespace string) context.Context {
	return genericapirequest.WithNamespace(clusters.WithCluster(ctx, cluster), namespace)
}

// Get reads the current object.
func (c Client[T]) Get(ctx context.Context, cluster, namespace, name string) (T, error) {
	var zero T
	obj, err := c.Storage.Get(Context(ctx, cluster, namespace), name, &metav1.GetOptions{})
	if err != nil {
		return zero, err
	}
	return obj.(T), nil
}

// GetCached reads an object from the watch cache when the resource has
// one (it may lag a write by milliseconds); use it on hot read paths.
func (c Client[T]) GetCached(ctx context.Context, cluster, namespace, name string) (T, error) {
	var zero T
	obj, err := c.Storage.Get(Context(ctx, cluster, namespace), name, &metav1.GetOptions{ResourceVersion: "0"})
	if err != nil {
		return zero, err
	}
	return obj.(T), nil
}

// List lists objects of a cluster (namespace "" for all namespaces).
func (c Client[T]) List(ctx context.Context, cluster, namespace string, opts *metainternalversion.ListOptions) (runtime.Object, error) {
	if opts == nil {
		opts = &metainternalversion.ListOptions{}
	}
	return c.Storage.List(Context(ctx, cluster, namespace), opts)
}

// Create creates obj in cluster.
func (c Client[T]) Create(ctx context.Context, cluster, namespace string, obj T) (T, error) {
	var zero T
	out, err := c.Storage.Create(Context(ctx, cluster, namespace), obj, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		return zero, err
	}
	return out.(T), nil
}

// Update writes obj (its resourceVersion guards against lost updates).
func (c Client[T]) Update(ctx context.Context, cluster, namespace, name string, obj T) (T, error) {
	return c.update(ctx, c.Storage, cluster, namespace, name, obj)
}

// UpdateStatus writes obj's status.
func (c Client[T]) UpdateStatus(ctx context.Context, cluster, namespace, name string, obj T) (T, error) {
	return c.update(ctx, c.Status, cluster, namespace, name, obj)
}

func (c Client[T]) update(ctx context.Context, u rest.Updater, cluster, namespace, name string, obj T) (T, error) {
	var zero T
	out, _, err := u.Update(Context(ctx, cluster, namespace), name, rest.DefaultUpdatedObjectInfo(obj),
		rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		return zero, err
	}
	return out.(T), nil
}

// Delete deletes an object.
func (c Client[T]) Delete(ctx context.Context, cluster, namespace, name string) error {
	_, _, err := c.Storage.Delete(Context(ctx, cluster, namespace), name, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{})
	return err
}

var _ client.Client[runtime.Object] = Client[runtime.Object]{}
