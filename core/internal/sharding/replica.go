package sharding

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/meshplane/meshplane/core/internal/reconciler/client"
)

// Replicated reads an object where it is: in this shard's registry, else
// in the replica of the other shards (read only, a watch behind).
type Replicated[T runtime.Object] struct {
	Local  client.Reader[T]
	Others *Others
	Kind   Kind
}

// WithReplicas returns local, falling back to the other shards' replicas
// of kind (local as is without shards).
func WithReplicas[T runtime.Object](local client.Reader[T], s *Shards, kind Kind) client.Reader[T] {
	if s == nil {
		return local
	}
	return &Replicated[T]{Local: local, Others: s.Others(), Kind: kind}
}

// Get reads an object.
func (r *Replicated[T]) Get(ctx context.Context, cluster, namespace, name string) (T, error) {
	obj, err := r.Local.Get(ctx, cluster, namespace, name)
	if apierrors.IsNotFound(err) {
		if o, ok := r.remote(cluster, name); ok {
			return o, nil
		}
	}
	return obj, err
}

// GetCached reads an object from a cache.
func (r *Replicated[T]) GetCached(ctx context.Context, cluster, namespace, name string) (T, error) {
	obj, err := r.Local.GetCached(ctx, cluster, namespace, name)
	if apierrors.IsNotFound(err) {
		if o, ok := r.remote(cluster, name); ok {
			return o, nil
		}
	}
	return obj, err
}

// List lists a cluster's objects on this shard.
func (r *Replicated[T]) List(ctx context.Context, cluster, namespace string, opts *metainternalversion.ListOptions) (runtime.Object, error) {
	return r.Local.List(ctx, cluster, namespace, opts)
}

func (r *Replicated[T]) remote(cluster, name string) (T, bool) {
	obj, _, ok := r.Others.Get(r.Kind, cluster, name)
	if !ok {
		var zero T
		return zero, false
	}
	t, ok := obj.DeepCopyObject().(T)
	return t, ok
}

// Resolver resolves a workspace path on this shard (local), else on the
// other shards.
func Resolver(local func(path string) (string, bool), s *Shards) func(path string) (string, bool) {
	if s == nil {
		return local
	}
	others := s.Others()
	return func(path string) (string, bool) {
		if c, ok := local(path); ok {
			return c, true
		}
		c, _, ok := others.Resolve(path)
		return c, ok
	}
}
