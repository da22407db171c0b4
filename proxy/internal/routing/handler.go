// Package routing is the front proxy's request path: it picks the shard
// for a request from the index, settles who the caller is, and streams
// the request to the shard.
//
//   - /clusters/<path or name>/...: the shard holding the workspace (a
//     mounted workspace: the shard of its parent, which proxies it to the
//     mount's URL once Ready); /clusters/* is refused (403), as kcp does;
//     an unknown workspace gets 403 too (its existence is not told).
//   - /services/apiexport/<path or name>/...: the shard holding the
//     export's workspace; other /services/.../clusters/<name>/...: the
//     shard holding that logical cluster; the rest (wildcards included)
//     and everything else: the root shard.
//
// Identity: a client certificate signed by the proxy's client CA makes
// the proxy forward the user in X-Remote-* headers, with its own client
// certificate the shards trust for that only; any other request goes on
// without the proxy's certificate, with the caller's bearer token for the
// shard to check. Clients' X-Remote-* and forwarding headers never reach
// a shard.
package routing

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/proxy/internal/index"
	"github.com/meshplane/meshplane/sdk/proxybody"
)

// RootShard is the name of the shard that holds root.
const RootShard = "root"

// Transports reach the shards: Identified presents the proxy's client
// certificate, Anonymous presents none.
type Transports struct {
	Identified, Anonymous http.RoundTripper
}

// Handler serves the proxy's endpoint.
type Handler struct {
	index                 *index.Index
	ready                 func() bool
	identified, anonymous *httputil.ReverseProxy
}

type targetKey struct{}

// New returns the handler; ready tells whether the index was filled once.
func New(idx *index.Index, t Transports, ready func() bool) *Handler {
	h := &Handler{index: idx, ready: ready}
	h.identified = h.reverseProxy(t.Identified)
	h.anonymous = h.reverseProxy(t.Anonymous)
	return h
}

func (h *Handler) reverseProxy(rt http.RoundTripper) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Transport:     rt,
		FlushInterval: -1, // watches stream
		Rewrite: func(pr *httputil.ProxyRequest) {
			target := pr.In.Context().Value(targetKey{}).(*url.URL)
			pr.Out.URL.Scheme, pr.Out.URL.Host = target.Scheme, target.Host
			pr.Out.Host = ""
		},
		// A shard's early refusal must not leave an HTTP/2 client
		// hanging (proxybody.WithClientBody in serve).
		ModifyResponse: proxybody.Release,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				return // the client went away
			}
			klog.FromContext(r.Context()).Error(err, "Shard request failed", "path", r.URL.Path)
			writeStatus(w, http.StatusBadGateway, metav1.StatusReasonServiceUnavailable, "the shard serving this request cannot be reached")
		},
	}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
	shard := h.serve(rec, r)
	requests.WithLabelValues(shard, strconv.Itoa(rec.code)).Inc()
	if shard != "" {
		duration.WithLabelValues(shard).Observe(time.Since(start).Seconds())
	}
}

// serve answers r and returns the shard it went to ("" when none).
func (h *Handler) serve(w http.ResponseWriter, r *http.Request) string {
	switch r.URL.Path {
	case "/healthz", "/livez":
		_, _ = w.Write([]byte("ok"))
		return ""
	case "/readyz":
		if !h.ready() {
			http.Error(w, "the shard index is not filled yet", http.StatusServiceUnavailable)
			return ""
		}
		_, _ = w.Write([]byte("ok"))
		return ""
	}
	shard, code, msg := h.route(r.URL.Path)
	if code != 0 {
		reason := metav1.StatusReasonForbidden
		if code == http.StatusServiceUnavailable {
			reason = metav1.StatusReasonServiceUnavailable
		}
		writeStatus(w, code, reason, msg)
		return ""
	}
	target, err := url.Parse(shard.BaseURL)
	if err != nil || target.Host == "" {
		writeStatus(w, http.StatusBadGateway, metav1.StatusReasonServiceUnavailable,
			fmt.Sprintf("shard %s has no usable base URL", shard.Name))
		return ""
	}
	out := r.Clone(proxybody.WithClientBody(context.WithValue(r.Context(), targetKey{}, target), r))
	scrub(out.Header)
	if u, ok := certUser(r.TLS); ok {
		setIdentity(out.Header, u)
		h.identified.ServeHTTP(w, out)
	} else {
		h.anonymous.ServeHTTP(w, out)
	}
	return shard.Name
}

// route picks the shard of a request path; a non-zero code refuses it.
func (h *Handler) route(p string) (index.Shard, int, string) {
	if rest, ok := strings.CutPrefix(p, "/clusters/"); ok {
		name, _, _ := strings.Cut(rest, "/")
		switch name {
		case "":
			return index.Shard{}, http.StatusForbidden, "a workspace path or logical cluster name is required after /clusters/"
		case "*":
			return index.Shard{}, http.StatusForbidden, "wildcard requests (/clusters/*) are not served by the front proxy; ask a shard directly"
		}
		if s, ok := h.index.Lookup(name); ok {
			return s, 0, ""
		}
		return index.Shard{}, http.StatusForbidden, fmt.Sprintf("workspace %q does not exist or access to it is not allowed", name)
	}
	if rest, ok := strings.CutPrefix(p, "/services/"); ok {
		// The export's workspace for the APIExport virtual workspace, else
		// the logical cluster a request names (/clusters/<name>/, not *).
		if exp, ok := strings.CutPrefix(rest, "apiexport/"); ok {
			name, _, _ := strings.Cut(exp, "/")
			if s, ok := h.index.Lookup(name); ok {
				return s, 0, ""
			}
		}
		if _, after, ok := strings.Cut(rest, "/clusters/"); ok {
			name, _, _ := strings.Cut(after, "/")
			if s, ok := h.index.Lookup(name); ok && name != "*" {
				return s, 0, ""
			}
		}
	}
	if s, ok := h.index.Shard(RootShard); ok {
		return s, 0, ""
	}
	return index.Shard{}, http.StatusServiceUnavailable, "the root shard is not known yet"
}

// writeStatus answers with a Kubernetes Status.
func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(&metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: msg, Reason: reason, Code: int32(code),
	})
}

type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.code = code
	s.ResponseWriter.WriteHeader(code)
}

// Flush lets watches stream through the recorder.
func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
