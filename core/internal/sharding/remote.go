package sharding

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Remote is a client.Client over another shard's API: each call goes to
// /clusters/<cluster>/ of the shard.
type Remote[T runtime.Object] struct {
	cfg  *rest.Config
	http *http.Client
	gvr  schema.GroupVersionResource
	new  func() T

	mu       sync.Mutex
	clusters map[string]*dynamic.DynamicClient
}

// NewRemote returns a client for gvr on the shard cfg points at.
func NewRemote[T runtime.Object](cfg *rest.Config, gvr schema.GroupVersionResource, newObj func() T) (*Remote[T], error) {
	u, err := url.Parse(cfg.Host)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("shard URL %q is not a URL", cfg.Host)
	}
	c := rest.CopyConfig(cfg)
	c.Host = u.Scheme + "://" + u.Host
	hc, err := rest.HTTPClientFor(c)
	if err != nil {
		return nil, err
	}
	return &Remote[T]{cfg: c, http: hc, gvr: gvr, new: newObj, clusters: map[string]*dynamic.DynamicClient{}}, nil
}

// in addresses the resource in a logical cluster through a dynamic client
// whose host ends in /clusters/<cluster> (one per cluster, sharing the
// connections).
func (r *Remote[T]) in(cluster, namespace string) dynamic.ResourceInterface {
	r.mu.Lock()
	dyn, ok := r.clusters[cluster]
	if !ok {
		c := rest.CopyConfig(r.cfg)
		c.Host += "/clusters/" + cluster
		dyn, _ = dynamic.NewForConfigAndClient(c, r.http) // only fails on a nil client
		r.clusters[cluster] = dyn
	}
	r.mu.Unlock()
	ri := dyn.Resource(r.gvr)
	if namespace != "" {
		return ri.Namespace(namespace)
	}
	return ri
}

func (r *Remote[T]) typed(u *unstructured.Unstructured) (T, error) {
	out := r.new()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		var zero T
		return zero, err
	}
	return out, nil
}

func (r *Remote[T]) untyped(obj T) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(r.gvr.GroupVersion().String())
	return u, nil
}

// Get reads an object.
func (r *Remote[T]) Get(ctx context.Context, cluster, namespace, name string) (T, error) {
	u, err := r.in(cluster, namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		var zero T
		return zero, err
	}
	return r.typed(u)
}

// GetCached is Get: the other shard's watch cache answers it.
func (r *Remote[T]) GetCached(ctx context.Context, cluster, namespace, name string) (T, error) {
	return r.Get(ctx, cluster, namespace, name)
}

// List lists a cluster's objects as unstructured.
func (r *Remote[T]) List(ctx context.Context, cluster, namespace string, _ *metainternalversion.ListOptions) (runtime.Object, error) {
	return r.in(cluster, namespace).List(ctx, metav1.ListOptions{})
}

// Create creates obj; a status it carries is written after (an API create
// drops it).
func (r *Remote[T]) Create(ctx context.Context, cluster, namespace string, obj T) (T, error) {
	var zero T
	u, err := r.untyped(obj)
	if err != nil {
		return zero, err
	}
	status, hasStatus := u.Object["status"]
	created, err := r.in(cluster, namespace).Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		return zero, err
	}
	if hasStatus {
		created.Object["status"] = status
		if created, err = r.in(cluster, namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return zero, fmt.Errorf("writing the status of a new object: %w", err)
		}
	}
	return r.typed(created)
}

// Update writes obj.
func (r *Remote[T]) Update(ctx context.Context, cluster, namespace, _ string, obj T) (T, error) {
	var zero T
	u, err := r.untyped(obj)
	if err != nil {
		return zero, err
	}
	out, err := r.in(cluster, namespace).Update(ctx, u, metav1.UpdateOptions{})
	if err != nil {
		return zero, err
	}
	return r.typed(out)
}

// UpdateStatus writes obj's status.
func (r *Remote[T]) UpdateStatus(ctx context.Context, cluster, namespace, _ string, obj T) (T, error) {
	var zero T
	u, err := r.untyped(obj)
	if err != nil {
		return zero, err
	}
	out, err := r.in(cluster, namespace).UpdateStatus(ctx, u, metav1.UpdateOptions{})
	if err != nil {
		return zero, err
	}
	return r.typed(out)
}

// Delete deletes an object.
func (r *Remote[T]) Delete(ctx context.Context, cluster, namespace, name string) error {
	return r.in(cluster, namespace).Delete(ctx, name, metav1.DeleteOptions{})
}

// Submit creates obj and returns the server's answer, status included: for
// reviews, whose status is the answer.
func (r *Remote[T]) Submit(ctx context.Context, cluster string, obj T) (T, error) {
	var zero T
	u, err := r.untyped(obj)
	if err != nil {
		return zero, err
	}
	delete(u.Object, "status")
	out, err := r.in(cluster, "").Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		return zero, err
	}
	return r.typed(out)
}
