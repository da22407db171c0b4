// Package scoped gives each workspace behind an APIExport virtual workspace
// a cluster.Cluster that is a view, not a copy: reads come from the
// endpoint's shared wildcard cache through its kcp cluster index, writes go
// through one client shared by every workspace of the endpoint, whose
// requests are routed to the workspace named in their context.
//
// Upstream's ScopedCluster (multicluster-provider v0.8) builds, for every
// engaged workspace, its own controller-runtime client, dynamic REST
// mapper, HTTP client and event recorder clients (~7 KB per workspace, more
// once used). Every workspace behind an export's virtual workspace serves
// the same exported and claimed resources, so one mapper (from the wildcard
// endpoint's discovery) answers for all, and one HTTP client carries every
// request.
package scoped

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/kcp-dev/logicalcluster/v3"
	mcpcache "github.com/kcp-dev/multicluster-provider/pkg/cache"
	mcrecorder "github.com/kcp-dev/multicluster-provider/pkg/events/recorder"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Options configure an Endpoint.
type Options struct {
	// Scheme knows the types of the controllers. Required.
	Scheme *runtime.Scheme
	// Cache are the wildcard cache's options (DefaultTransform, ByObject...);
	// its Scheme, HTTPClient and Mapper are the endpoint's.
	Cache cache.Options
	// Informers returns where a workspace's informers come from (the
	// informers of the wildcard cache filtered to the workspace, such as
	// package dispatch's view); default: the wildcard cache as it is.
	Informers func(wildcard mcpcache.WildcardCache, cluster logicalcluster.Name) cache.Informers
	// Recorders makes a workspace's event recorders when first asked for.
	// Required.
	Recorders *mcrecorder.Manager
}

// Endpoint is what the workspaces behind one virtual workspace URL share:
// the wildcard cache, one HTTP client, one REST mapper, one client.
type Endpoint struct {
	config    *rest.Config // the virtual workspace URL, no /clusters/ part
	scheme    *runtime.Scheme
	wildcard  mcpcache.WildcardCache
	informers func(mcpcache.WildcardCache, logicalcluster.Name) cache.Informers
	recorders *mcrecorder.Manager
	http      *http.Client
	mapper    meta.RESTMapper
	shared    client.Client // requests routed to the workspace of their context
}

// clusterPlaceholder stands for the workspace in the shared client's URL;
// clusterTransport replaces the URL's base with the workspace's own.
const clusterPlaceholder = "meshplane-workspace-of-context"

// clusterKey carries the base URL of a request's workspace (the endpoint's
// URL and /clusters/<name>) in the request's context.
type clusterKey struct{}

// NewEndpoint builds the shared parts of the workspaces behind the virtual
// workspace cfg.Host; the wildcard cache is not started.
func NewEndpoint(cfg *rest.Config, opts Options) (*Endpoint, error) {
	if opts.Scheme == nil || opts.Recorders == nil {
		return nil, errors.New("scoped: Options.Scheme and Options.Recorders are required")
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Host = strings.TrimSuffix(cfg.Host, "/")
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("HTTP client for %s: %w", cfg.Host, err)
	}
	wildcard := rest.CopyConfig(cfg)
	wildcard.Host += "/clusters/*"
	mapper, err := apiutil.NewDynamicRESTMapper(wildcard, hc)
	if err != nil {
		return nil, fmt.Errorf("REST mapper for %s: %w", wildcard.Host, err)
	}
	co := opts.Cache
	co.Scheme, co.HTTPClient, co.Mapper = opts.Scheme, hc, mapper
	wc, err := mcpcache.NewWildcardCache(cfg, co)
	if err != nil {
		return nil, fmt.Errorf("wildcard cache for %s: %w", cfg.Host, err)
	}

	routedCfg := rest.CopyConfig(cfg)
	routedCfg.Host += "/clusters/" + clusterPlaceholder
	placeholder, err := url.Parse(routedCfg.Host)
	if err != nil {
		return nil, err
	}
	next := hc.Transport
	if next == nil { // a plain config's client leaves it to net/http
		next = http.DefaultTransport
	}
	routed := *hc
	routed.Transport = &clusterTransport{next: next, placeholder: strings.TrimSuffix(placeholder.Path, "/")}
	shared, err := client.New(routedCfg, client.Options{Scheme: opts.Scheme, HTTPClient: &routed, Mapper: mapper})
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", cfg.Host, err)
	}
	informers := opts.Informers
	if informers == nil {
		informers = func(wc mcpcache.WildcardCache, _ logicalcluster.Name) cache.Informers { return wc }
	}
	return &Endpoint{config: cfg, scheme: opts.Scheme, wildcard: wc, informers: informers,
		recorders: opts.Recorders, http: hc, mapper: mapper, shared: shared}, nil
}

// Cache is the endpoint's wildcard cache.
func (e *Endpoint) Cache() mcpcache.WildcardCache { return e.wildcard }

// URL is the endpoint's virtual workspace URL.
func (e *Endpoint) URL() string { return e.config.Host }

// Cluster returns the view of logical cluster name.
func (e *Endpoint) Cluster(name logicalcluster.Name) (*Cluster, error) {
	base, err := url.Parse(e.config.Host + "/clusters/" + name.String())
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", name, err)
	}
	c := &Cluster{e: e, name: name}
	c.cache = &Cache{Reader: NewReader(e.store, name.String()), Informers: e.informers(e.wildcard, name), wildcard: e.wildcard}
	c.client = &workspaceClient{Client: e.shared, base: base, cache: c.cache}
	return c, nil
}

// store is the wildcard informer's store of obj's kind.
func (e *Endpoint) store(obj runtime.Object) (toolscache.Indexer, schema.GroupVersionKind, meta.RESTScopeName, error) {
	inf, gvk, scope, err := e.wildcard.GetSharedInformer(obj)
	if err != nil {
		return nil, gvk, "", err
	}
	return inf.GetIndexer(), gvk, scope, nil
}

// clusterTransport sends a request of the shared client to the workspace
// in its context, at the URL of the endpoint that serves it; without one
// it fails (never a request to a wrong place).
type clusterTransport struct {
	next        http.RoundTripper
	placeholder string // the shared client's base path, ending in /clusters/<placeholder>
}

func (t *clusterTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base, _ := req.Context().Value(clusterKey{}).(*url.URL)
	if base == nil {
		return nil, errors.New("scoped: a request of the shared workspace client without a workspace")
	}
	tail, ok := strings.CutPrefix(req.URL.Path, t.placeholder)
	if !ok {
		return nil, fmt.Errorf("scoped: request path %s outside the shared workspace client's base %s", req.URL.Path, t.placeholder)
	}
	r := req.Clone(req.Context())
	r.URL.Scheme, r.URL.Host, r.Host = base.Scheme, base.Host, ""
	r.URL.Path, r.URL.RawPath = strings.TrimSuffix(base.Path, "/")+tail, ""
	return t.next.RoundTrip(r)
}
