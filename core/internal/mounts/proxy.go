package mounts

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/sdk/egress"
	"github.com/meshplane/meshplane/sdk/proxybody"
)

// Identity headers the core sets on proxied requests, as kcp's front
// proxy does towards its backends.
const (
	UserHeader        = "X-Remote-User"
	GroupHeader       = "X-Remote-Group"
	ExtraHeaderPrefix = "X-Remote-Extra-"
)

// Mount headers tell the mount server which mount a request is for, so it
// can refuse a mount object (anyone may write one) that points at a URL
// it serves for another: the workspace path, the cluster of the mounted
// workspace's parent (where the mount object lives) and the mount object
// as <group>/<Kind>/[<namespace>/]<name>.
const (
	MountHeaderPrefix    = "X-Meshplane-Mount-"
	MountWorkspaceHeader = MountHeaderPrefix + "Workspace"
	MountClusterHeader   = MountHeaderPrefix + "Cluster"
	MountRefHeader       = MountHeaderPrefix + "Ref"
)

// RefString is the value of MountRefHeader for a mount object.
func RefString(k ObjectKey) string {
	return k.Group + "/" + k.Kind + "/" + name(k.Namespace, k.Name)
}

// target is the mounted workspace a request goes to.
type target struct {
	Mounted
	// Path is the mounted workspace's path (root:org:b).
	Path string
}

type targetKey struct{}

func targetFrom(ctx context.Context) (target, bool) {
	t, ok := ctx.Value(targetKey{}).(target)
	return t, ok
}

// Handler serves the requests to mounted workspaces.
type Handler struct {
	// Resolve maps a workspace path to its logical cluster.
	Resolve func(path string) (string, bool)
	// Workspaces are the mounted workspaces.
	Workspaces *Workspaces
	// State returns what a mounted workspace's mount object says.
	State func(Mounted) (State, bool)
	// Transport reaches mount servers.
	Transport http.RoundTripper
	Codecs    runtime.NegotiatedSerializer

	once  sync.Once
	proxy *httputil.ReverseProxy
}

// WithMounts sends requests to /clusters/<path of a mounted workspace>/...
// to mounted, with the path rewritten to the rest and the parent as the
// request's cluster; everything else goes to next. mounted is the handler
// chain of mounts (authentication, audit, Authorizer, ...) ending in h.
func (h *Handler) WithMounts(next, mounted http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t, trail, ok := h.lookup(r.URL.Path)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		ctx := clusters.WithCluster(context.WithValue(r.Context(), targetKey{}, t), t.Parent)
		u := *r.URL
		u.Path = "/" + trail
		u.RawPath = ""
		r = r.WithContext(ctx)
		r.URL = &u
		r.RequestURI = u.RequestURI()
		mounted.ServeHTTP(w, r)
	})
}

// lookup finds the mounted workspace of a /clusters/<path>/<trail> URL
// path.
func (h *Handler) lookup(p string) (target, string, bool) {
	rest, ok := strings.CutPrefix(p, clusters.Prefix)
	if !ok {
		return target{}, "", false
	}
	path, trail, _ := strings.Cut(rest, "/")
	i := strings.LastIndexByte(path, ':')
	if i <= 0 || !clusters.IsValidPath(path) {
		return target{}, "", false
	}
	parent, ok := h.Resolve(path[:i])
	if !ok {
		return target{}, "", false
	}
	m, ok := h.Workspaces.Get(parent, path[i+1:])
	if !ok {
		return target{}, "", false
	}
	return target{Mounted: m, Path: path}, trail, true
}

type urlKey struct{}

// ServeHTTP proxies an authorized request to the mount's status.URL, or
// answers 503 while the mount is not Ready.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	instrument(w, func(w http.ResponseWriter) { h.serve(w, r) })
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	t, ok := targetFrom(r.Context())
	if !ok {
		h.fail(w, r, apierrors.NewInternalError(fmt.Errorf("no mounted workspace in the request")))
		return
	}
	s, known := h.State(t.Mounted)
	if !known {
		h.fail(w, r, unavailable(t, "its mount object is not known yet"))
		return
	}
	if !s.Ready() {
		h.fail(w, r, unavailable(t, s.Message))
		return
	}
	dst, err := url.Parse(s.URL)
	if err != nil || dst.Host == "" || dst.Scheme != "https" && dst.Scheme != "http" {
		h.fail(w, r, unavailable(t, fmt.Sprintf("its mount URL %q is not a valid URL", s.URL)))
		return
	}
	h.reverseProxy().ServeHTTP(w, r.WithContext(proxybody.WithClientBody(context.WithValue(r.Context(), urlKey{}, dst), r)))
}

// unreachable is the one message for a mount server the core did not
// get an answer from.
const unreachable = "its mount server is not reachable"

func unavailable(t target, why string) error {
	return apierrors.NewServiceUnavailable(fmt.Sprintf("workspace %s is a mount that is not ready: %s", t.Path, why))
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	responsewriters.ErrorNegotiated(err, h.Codecs, schema.GroupVersion{}, w, r)
}

func (h *Handler) reverseProxy() *httputil.ReverseProxy {
	h.once.Do(func() {
		h.proxy = &httputil.ReverseProxy{
			Rewrite:   rewrite,
			Transport: h.Transport,
			// Watches and other streams reach the client as they come.
			FlushInterval: -1,
			// An early refusal by the mount server must not leave an
			// HTTP/2 client hanging (proxybody.WithClientBody in ServeHTTP).
			ModifyResponse: proxybody.Release,
			// One answer for every failure (refused by the allow-list,
			// closed port, timeout, TLS): a mount must not map the network.
			ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
				t, _ := targetFrom(r.Context())
				log := klog.FromContext(r.Context())
				if errors.Is(err, egress.ErrNotAllowed) {
					log.V(1).Info("Mount URL refused: not in --mount-allowed-hosts", "workspace", t.Path, "err", err)
				} else {
					log.V(2).Info("Mount server unreachable", "workspace", t.Path, "err", err)
				}
				h.fail(w, r, unavailable(t, unreachable))
			},
		}
	})
	return h.proxy
}

// rewrite sends the request to <mount URL>/<rest of the path>, with the
// caller's identity in X-Remote-* headers and none of its credentials.
func rewrite(pr *httputil.ProxyRequest) {
	dst := pr.In.Context().Value(urlKey{}).(*url.URL)
	out := pr.Out
	out.URL.Scheme, out.URL.Host = dst.Scheme, dst.Host
	out.URL.Path = strings.TrimSuffix(dst.Path, "/") + pr.In.URL.Path
	out.URL.RawPath = ""
	out.URL.RawQuery = pr.In.URL.RawQuery
	out.Host = ""
	for k := range out.Header {
		if k == "Authorization" || strings.HasPrefix(k, "Impersonate-") || strings.HasPrefix(k, "X-Remote-") || strings.HasPrefix(k, MountHeaderPrefix) {
			out.Header.Del(k)
		}
	}
	if t, ok := targetFrom(pr.In.Context()); ok {
		out.Header.Set(MountWorkspaceHeader, t.Path)
		out.Header.Set(MountClusterHeader, t.Parent)
		out.Header.Set(MountRefHeader, RefString(t.Object()))
	}
	u, ok := genericapirequest.UserFrom(pr.In.Context())
	if !ok {
		return
	}
	out.Header.Set(UserHeader, u.GetName())
	for _, g := range u.GetGroups() {
		out.Header.Add(GroupHeader, g)
	}
	for k, vs := range u.GetExtra() {
		for _, v := range vs {
			out.Header.Add(ExtraHeaderPrefix+url.PathEscape(k), v)
		}
	}
}
