package manager

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
)

// clients hands out the clients of engaged workspaces: each reads from the
// workspace's view of the shared wildcard cache and writes through one
// client of the export's virtual workspace shared by all workspaces, whose
// requests are sent to the workspace named in their context. Every
// workspace behind an export's virtual workspace serves the same exported
// and claimed resources, so one REST mapper (from the wildcard endpoint's
// discovery) answers for all. A client per workspace, as upstream makes,
// holds its own REST clients, rate limiter and token source per kind
// (~10 KB per workspace, and its own discovery mapper when used).
type clients struct {
	vw     *rest.Config
	scheme *runtime.Scheme

	once   sync.Once
	err    error
	shared client.Client
}

// clusterPlaceholder stands for the workspace in the shared client's URL;
// clusterTransport replaces the URL's base with the workspace's own.
const clusterPlaceholder = "meshplane-workspace-of-context"

// clusterKey carries the base URL of a request's workspace (its shard's
// virtual workspace URL and /clusters/<name>) in the request's context.
type clusterKey struct{}

func (c *clients) init() error {
	c.once.Do(func() {
		hc, err := rest.HTTPClientFor(c.vw)
		if err != nil {
			c.err = err
			return
		}
		wildcard := rest.CopyConfig(c.vw)
		wildcard.Host += "/clusters/*"
		mapper, err := apiutil.NewDynamicRESTMapper(wildcard, hc)
		if err != nil {
			c.err = err
			return
		}
		cfg := rest.CopyConfig(c.vw)
		cfg.Host += "/clusters/" + clusterPlaceholder
		placeholder, err := url.Parse(cfg.Host)
		if err != nil {
			c.err = err
			return
		}
		routed := *hc
		routed.Transport = &clusterTransport{next: hc.Transport, placeholder: strings.TrimSuffix(placeholder.Path, "/")}
		c.shared, c.err = client.New(cfg, client.Options{Scheme: c.scheme, HTTPClient: &routed, Mapper: mapper})
	})
	return c.err
}

// clusterTransport sends a request of the shared client to the workspace
// in its context, at the URL of the shard that serves it (every shard's
// virtual workspace takes the same credentials); without one it fails
// (never a request to a wrong place).
type clusterTransport struct {
	next        http.RoundTripper
	placeholder string // the shared client's base path, ending in /clusters/<placeholder>
}

func (t *clusterTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base, _ := req.Context().Value(clusterKey{}).(*url.URL)
	if base == nil {
		return nil, errors.New("manager: a request of the shared workspace client without a workspace")
	}
	tail, ok := strings.CutPrefix(req.URL.Path, t.placeholder)
	if !ok {
		return nil, fmt.Errorf("manager: request path %s outside the shared workspace client's base %s", req.URL.Path, t.placeholder)
	}
	r := req.Clone(req.Context())
	r.URL.Scheme, r.URL.Host, r.Host = base.Scheme, base.Host, ""
	r.URL.Path, r.URL.RawPath = strings.TrimSuffix(base.Path, "/")+tail, ""
	return t.next.RoundTrip(r)
}

// Client returns the client of an engaged workspace (by logical-cluster
// name or path): reads come from the workspace's view of the shared cache,
// writes go to the workspace through the virtual workspace.
func (k *Kit) Client(ctx context.Context, name string) (client.Client, error) {
	cl, err := k.Manager.GetCluster(ctx, multicluster.ClusterName(name))
	if err != nil {
		return nil, err
	}
	if err := k.clients.init(); err != nil {
		return nil, err
	}
	// The engaged cluster's URL names the shard serving the workspace.
	base, err := url.Parse(cl.GetConfig().Host)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", name, err)
	}
	return &workspaceClient{Client: k.clients.shared, base: base, cache: cl.GetCache()}, nil
}

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
