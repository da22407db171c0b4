package proxy

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/client-go/rest"
)

// TestServeHTTP checks what reaches the target: only requests with a
// verified client certificate of an allowed name, for this KubeCluster's
// own mount, with the target's credentials instead of the caller's
// headers.
func TestServeHTTP(t *testing.T) {
	var got *http.Request
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Clone(r.Context())
		_, _ = io.WriteString(w, "ok")
	}))
	defer target.Close()
	p := New([]string{"system:meshplane:mount-proxy"})
	if err := p.Set("b", "org-cluster", &rest.Config{Host: target.URL + "/clusters/root:target", BearerToken: "target-token"}); err != nil {
		t.Fatal(err)
	}
	tlsFrom := func(cn string) *tls.ConnectionState {
		cert := &x509.Certificate{Subject: pkix.Name{CommonName: cn}}
		return &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{cert}}}
	}
	for _, tc := range []struct {
		name    string
		tls     *tls.ConnectionState
		path    string
		cluster string
		ref     string
		want    int
	}{
		{"forwarded", tlsFrom("system:meshplane:mount-proxy"), "/kubeclusters/b/api/v1/namespaces", "org-cluster", RefPrefix + "b", http.StatusOK},
		{"no client certificate", nil, "/kubeclusters/b/api/v1/namespaces", "org-cluster", RefPrefix + "b", http.StatusUnauthorized},
		{"client not allowed", tlsFrom("someone"), "/kubeclusters/b/api/v1/namespaces", "org-cluster", RefPrefix + "b", http.StatusForbidden},
		{"mount object of another workspace", tlsFrom("system:meshplane:mount-proxy"), "/kubeclusters/b/api", "other-cluster", RefPrefix + "b", http.StatusForbidden},
		{"another mount object", tlsFrom("system:meshplane:mount-proxy"), "/kubeclusters/b/api", "org-cluster", RefPrefix + "c", http.StatusForbidden},
		{"unknown KubeCluster", tlsFrom("system:meshplane:mount-proxy"), "/kubeclusters/c/api", "org-cluster", RefPrefix + "c", http.StatusServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got = nil
			r := httptest.NewRequest(http.MethodGet, tc.path, nil)
			r.TLS = tc.tls
			r.Header.Set(MountClusterHeader, tc.cluster)
			r.Header.Set(MountRefHeader, tc.ref)
			r.Header.Set("X-Remote-User", "alice")
			w := httptest.NewRecorder()
			p.ServeHTTP(w, r)
			if w.Code != tc.want {
				t.Fatalf("status %d (%s), want %d", w.Code, w.Body, tc.want)
			}
			if tc.want != http.StatusOK {
				if got != nil {
					t.Fatal("a refused request reached the target")
				}
				return
			}
			if got.URL.Path != "/clusters/root:target/api/v1/namespaces" || got.Header.Get("Authorization") != "Bearer target-token" ||
				got.Header.Get("X-Remote-User") != "" || got.Header.Get(MountClusterHeader) != "" {
				t.Errorf("the target got path %q, Authorization %q, X-Remote-User %q, %s %q; want the rewritten path, the target's token and no caller headers",
					got.URL.Path, got.Header.Get("Authorization"), got.Header.Get("X-Remote-User"), MountClusterHeader, got.Header.Get(MountClusterHeader))
			}
		})
	}
}
