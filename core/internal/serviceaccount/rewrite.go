package serviceaccount

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
)

// WithClusterFromToken sends a request that names no logical cluster
// (not under /clusters/ or /services/) and carries a service-account
// token to the token's cluster, as kcp does for in-cluster clients: a
// client given only the server's base URL and a token reaches the
// workspace of its ServiceAccount. It only reads the claim; the token is
// verified by authentication later, and a forged claim gains nothing
// because a token is accepted only in its own cluster. validName checks
// the claimed cluster name; health and version endpoints stay as they are.
func WithClusterFromToken(handler http.Handler, prefix string, validName func(string) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		if strings.HasPrefix(path, prefix) || strings.HasPrefix(path, "/services/") || untouched[path] {
			handler.ServeHTTP(w, r)
			return
		}
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			handler.ServeHTTP(w, r)
			return
		}
		cluster := ClusterOfToken(strings.TrimSpace(token))
		if cluster == "" || !validName(cluster) {
			handler.ServeHTTP(w, r)
			return
		}
		u := *r.URL
		u.Path = strings.TrimSuffix(prefix, "/") + "/" + cluster + path
		u.RawPath = ""
		r = r.Clone(r.Context())
		r.URL = &u
		r.RequestURI = u.RequestURI()
		handler.ServeHTTP(w, r)
	})
}

var untouched = map[string]bool{"/healthz": true, "/livez": true, "/readyz": true, "/version": true}

// ClusterOfToken reads, without verifying it, the logical cluster a
// service-account token claims (kcp's bound or legacy claim); "" for
// anything else.
func ClusterOfToken(token string) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return ""
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var c struct {
		Kubernetes *struct {
			ClusterName string `json:"clusterName"`
		} `json:"kubernetes.io"`
		LegacyCluster string `json:"kubernetes.io/serviceaccount/clusterName"`
	}
	if json.Unmarshal(payload, &c) != nil {
		return ""
	}
	if c.Kubernetes != nil && c.Kubernetes.ClusterName != "" {
		return c.Kubernetes.ClusterName
	}
	return c.LegacyCluster
}
