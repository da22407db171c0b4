// Package proxy serves the mounted APIs: /kubeclusters/<name>/<path> is
// forwarded to <target server>/<path> with the target's own credentials
// from the KubeCluster's kubeconfig. Only callers with a client
// certificate of the configured CA (the core's mount client certificate)
// and an allowed name reach it; the caller's identity arrives in
// X-Remote-User/Group headers, which are logged, not forwarded. The core
// also says which mount object a request is for (X-Meshplane-Mount-Cluster
// and -Ref): a request is forwarded only for the KubeCluster itself, so a
// mount object elsewhere that copies this proxy's URL gets nothing.
package proxy

import (
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/sdk/proxybody"
)

// Requests counts the proxy's requests by result: forwarded, refused (no
// or a wrong client certificate, or another mount), unavailable (no Ready
// KubeCluster of that name).
var Requests = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "kubecluster_mounts_requests_total",
	Help: "Requests to the example mount proxy by result (forwarded, refused, unavailable).",
}, []string{"result"})

// Prefix starts the path of every mounted API.
const Prefix = "/kubeclusters/"

// Proxy forwards to the targets of Ready KubeClusters.
type Proxy struct {
	// AllowedClients are the client certificate common names accepted;
	// empty accepts any certificate the TLS layer verified.
	AllowedClients []string

	mu      sync.RWMutex
	targets map[string]target
}

type target struct {
	cluster string // the KubeCluster's logical cluster
	proxy   *httputil.ReverseProxy
}

// Headers the core sets on requests to mounts.
const (
	MountClusterHeader = "X-Meshplane-Mount-Cluster"
	MountRefHeader     = "X-Meshplane-Mount-Ref"
	// RefPrefix starts the MountRefHeader of a KubeCluster.
	RefPrefix = "mounts.examples.meshplane.io/KubeCluster/"
)

// New returns a proxy without targets.
func New(allowed []string) *Proxy {
	return &Proxy{AllowedClients: allowed, targets: map[string]target{}}
}

// Set makes name, a KubeCluster in logical cluster cluster, forward to the
// API cfg points at, with cfg's credentials.
func (p *Proxy) Set(name, cluster string, cfg *rest.Config) error {
	dst, err := url.Parse(cfg.Host)
	if err != nil {
		return fmt.Errorf("target server %q: %w", cfg.Host, err)
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return fmt.Errorf("target credentials: %w", err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			rest := strings.TrimPrefix(pr.In.URL.Path, Prefix+name)
			pr.Out.URL.Scheme, pr.Out.URL.Host = dst.Scheme, dst.Host
			pr.Out.URL.Path = strings.TrimSuffix(dst.Path, "/") + rest
			pr.Out.URL.RawPath = ""
			pr.Out.Host = ""
			for k := range pr.Out.Header {
				if k == "Authorization" || strings.HasPrefix(k, "X-Remote-") || strings.HasPrefix(k, "X-Meshplane-") || strings.HasPrefix(k, "Impersonate-") {
					pr.Out.Header.Del(k)
				}
			}
		},
		Transport:     transport,
		FlushInterval: -1,
		// An early refusal by the target must not leave an HTTP/2 client
		// hanging (proxybody.WithClientBody in ServeHTTP).
		ModifyResponse: proxybody.Release,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			klog.V(2).InfoS("Target unreachable", "kubecluster", name, "err", err)
			// The reason stays in the log: a caller learns nothing about
			// the network behind the proxy.
			http.Error(w, fmt.Sprintf("kubecluster %s: target unreachable", name), http.StatusBadGateway)
		},
	}
	p.mu.Lock()
	p.targets[name] = target{cluster: cluster, proxy: rp}
	p.mu.Unlock()
	return nil
}

// Remove stops forwarding name.
func (p *Proxy) Remove(name string) {
	p.mu.Lock()
	delete(p.targets, name)
	p.mu.Unlock()
}

// ServeHTTP implements http.Handler.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
		Requests.WithLabelValues("refused").Inc()
		http.Error(w, "a client certificate is required", http.StatusUnauthorized)
		return
	}
	if cn := r.TLS.VerifiedChains[0][0].Subject.CommonName; len(p.AllowedClients) > 0 && !slices.Contains(p.AllowedClients, cn) {
		Requests.WithLabelValues("refused").Inc()
		http.Error(w, fmt.Sprintf("client %q is not allowed", cn), http.StatusForbidden)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, Prefix)
	if !ok {
		http.NotFound(w, r)
		return
	}
	name, _, _ := strings.Cut(rest, "/")
	p.mu.RLock()
	t, ok := p.targets[name]
	p.mu.RUnlock()
	if !ok {
		Requests.WithLabelValues("unavailable").Inc()
		http.Error(w, fmt.Sprintf("kubecluster %q is not ready", name), http.StatusServiceUnavailable)
		return
	}
	if r.Header.Get(MountClusterHeader) != t.cluster || r.Header.Get(MountRefHeader) != RefPrefix+name {
		klog.V(2).InfoS("Refusing a request for another mount", "kubecluster", name, "cluster", r.Header.Get(MountClusterHeader), "ref", r.Header.Get(MountRefHeader))
		Requests.WithLabelValues("refused").Inc()
		http.Error(w, fmt.Sprintf("this URL serves only the mount of KubeCluster %s in its own workspace", name), http.StatusForbidden)
		return
	}
	klog.V(4).InfoS("Forwarding", "kubecluster", name, "user", r.Header.Get("X-Remote-User"), "method", r.Method, "path", r.URL.Path)
	Requests.WithLabelValues("forwarded").Inc()
	t.proxy.ServeHTTP(w, r.WithContext(proxybody.WithClientBody(r.Context(), r)))
}
