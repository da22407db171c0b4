package mounts

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// mountServer is the API a mounted workspace is served from in these
// tests: a TLS server that accepts only clients with a certificate of the
// core's CA (the core's mount client certificate) and forwards to another
// workspace of the same core with the admin's token, recording the
// identity headers it was sent.
type mountServer struct {
	*httptest.Server
	mu      sync.Mutex
	users   []string
	authz   []string
	clients []string
	mounts  []string
}

func startMountServer(t *testing.T, s *framework.Server, targetPath string) *mountServer {
	t.Helper()
	caPEM, err := os.ReadFile(filepath.Join(s.RootDir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	target, err := url.Parse(s.ClusterURL(targetPath))
	if err != nil {
		t.Fatal(err)
	}
	token := s.AdminToken(t)
	m := &mountServer{}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = target.Scheme, target.Host
			pr.Out.URL.Path = target.Path + pr.In.URL.Path
			pr.Out.URL.RawPath = ""
			pr.Out.Host = ""
			pr.Out.Header.Del("X-Remote-User")
			pr.Out.Header.Del("X-Remote-Group")
			pr.Out.Header.Set("Authorization", "Bearer "+token)
		},
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
		FlushInterval: -1,
	}
	m.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.users = append(m.users, r.Header.Get("X-Remote-User"))
		m.authz = append(m.authz, r.Header.Get("Authorization"))
		m.mounts = append(m.mounts, r.Header.Get("X-Meshplane-Mount-Workspace")+" "+r.Header.Get("X-Meshplane-Mount-Cluster")+" "+r.Header.Get("X-Meshplane-Mount-Ref"))
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			m.clients = append(m.clients, r.TLS.PeerCertificates[0].Subject.CommonName)
		}
		m.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	m.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	_ = m.Listener.Close()
	m.Listener = mountListener(t)
	m.StartTLS()
	t.Cleanup(m.Close)
	// The core trusts mount servers whose CA is in --mount-ca-file.
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: m.Certificate().Raw})
	// Written whole (rename), as parallel tests write the same file while
	// the core may read it.
	tmp, err := os.CreateTemp(filepath.Dir(mountCAFile), "mount-ca-*.tmp")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmp.Write(certPEM); err != nil {
		t.Fatal(err)
	}
	if err := tmp.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp.Name(), mountCAFile); err != nil {
		t.Fatal(err)
	}
	return m
}

// seen returns the X-Remote-User values, Authorization headers, client
// certificate names and mount headers (workspace, cluster, ref) of the
// requests so far.
func (m *mountServer) seen() (users, authz, clients, mounts []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string{}, m.users...), append([]string{}, m.authz...), append([]string{}, m.clients...), append([]string{}, m.mounts...)
}
