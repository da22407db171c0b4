package scoped

import (
	"context"
	"net/url"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// workspaceClient is the shared client bound to one workspace.
type workspaceClient struct {
	client.Client
	base  *url.URL // the workspace's URL on its shard's virtual workspace
	cache client.Reader
}

func (w *workspaceClient) in(ctx context.Context) context.Context {
	return context.WithValue(ctx, clusterKey{}, w.base)
}

func (w *workspaceClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(runtime.Unstructured); ok {
		return w.Client.Get(w.in(ctx), key, obj, opts...)
	}
	return w.cache.Get(ctx, key, obj, opts...)
}

func (w *workspaceClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*unstructured.UnstructuredList); ok {
		return w.Client.List(w.in(ctx), list, opts...)
	}
	return w.cache.List(ctx, list, opts...)
}

func (w *workspaceClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	return w.Client.Apply(w.in(ctx), obj, opts...)
}

func (w *workspaceClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	return w.Client.Create(w.in(ctx), obj, opts...)
}

func (w *workspaceClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	return w.Client.Delete(w.in(ctx), obj, opts...)
}

func (w *workspaceClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return w.Client.Update(w.in(ctx), obj, opts...)
}

func (w *workspaceClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return w.Client.Patch(w.in(ctx), obj, patch, opts...)
}

func (w *workspaceClient) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	return w.Client.DeleteAllOf(w.in(ctx), obj, opts...)
}

func (w *workspaceClient) Status() client.SubResourceWriter { return w.SubResource("status") }

func (w *workspaceClient) SubResource(sub string) client.SubResourceClient {
	return &workspaceSubResource{c: w.Client.SubResource(sub), w: w}
}

// workspaceSubResource is a subresource client bound to one workspace.
type workspaceSubResource struct {
	c client.SubResourceClient
	w *workspaceClient
}

func (s *workspaceSubResource) Get(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceGetOption) error {
	return s.c.Get(s.w.in(ctx), obj, sub, opts...)
}

func (s *workspaceSubResource) Create(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
	return s.c.Create(s.w.in(ctx), obj, sub, opts...)
}

func (s *workspaceSubResource) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	return s.c.Update(s.w.in(ctx), obj, opts...)
}

func (s *workspaceSubResource) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	return s.c.Patch(s.w.in(ctx), obj, patch, opts...)
}

func (s *workspaceSubResource) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	return s.c.Apply(s.w.in(ctx), obj, opts...)
}

// apiReader reads the workspace through the shared client, never the
// cache.
type apiReader struct{ w *workspaceClient }

func (r apiReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return r.w.Client.Get(r.w.in(ctx), key, obj, opts...)
}

func (r apiReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return r.w.Client.List(r.w.in(ctx), list, opts...)
}
