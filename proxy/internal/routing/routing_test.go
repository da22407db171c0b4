package routing

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net/http"
	"slices"
	"testing"

	"github.com/meshplane/meshplane/proxy/internal/index"
)

func TestRoute(t *testing.T) {
	i := index.New()
	i.SetShard(index.Shard{Name: "root", BaseURL: "https://root"}, false)
	i.SetShard(index.Shard{Name: "b", BaseURL: "https://b"}, false)
	i.SetCluster("root", "root", "root", false)
	i.SetCluster("b", "c1", "root:org", false)
	h := New(i, Transports{}, func() bool { return true })
	for _, tc := range []struct {
		path, shard string
		code        int
	}{
		{"/clusters/root:org/api/v1/namespaces", "b", 0},
		{"/clusters/c1/api", "b", 0},
		{"/clusters/root/apis", "root", 0},
		{"/clusters/*/api/v1/configmaps", "", http.StatusForbidden},
		{"/clusters/", "", http.StatusForbidden},
		{"/clusters/root:missing/api", "", http.StatusForbidden},
		{"/services/apiexport/root:org/export/clusters/*/api", "b", 0},
		{"/services/apiexport/unknown/export/clusters/*/api", "root", 0},
		{"/services/initializingworkspaces/root:universal/clusters/*/api", "root", 0},
		{"/services/initializingworkspaces/root:universal/clusters/c1/api", "b", 0},
		{"/services/terminatingworkspaces/root:t/clusters/unknown/api", "root", 0},
		{"/version", "root", 0},
	} {
		s, code, msg := h.route(tc.path)
		if s.Name != tc.shard || code != tc.code {
			t.Errorf("route(%s) = %q, %d (%s); want %q, %d", tc.path, s.Name, code, msg, tc.shard, tc.code)
		}
	}
}

func TestIdentityHeaders(t *testing.T) {
	h := http.Header{}
	h.Set("Authorization", "Bearer x")
	h.Set("X-Remote-User", "admin")
	h.Add("x-remote-group", "system:masters")
	h.Set("X-Remote-Extra-Scopes", "a")
	h.Set("X-Forwarded-For", "1.2.3.4")
	h.Set("Forwarded", "for=1.2.3.4")
	h.Set("Impersonate-User", "bob")
	scrub(h)
	for _, k := range []string{"X-Remote-User", "X-Remote-Group", "X-Remote-Extra-Scopes", "X-Forwarded-For", "Forwarded"} {
		if h.Get(k) != "" {
			t.Errorf("%s survived scrubbing", k)
		}
	}
	if h.Get("Impersonate-User") != "bob" || h.Get("Authorization") == "" {
		t.Errorf("scrubbing removed what the shard decides on: %v", h)
	}

	leaf := &x509.Certificate{Subject: pkix.Name{CommonName: "dave", Organization: []string{"team", "system:masters"}}}
	u, ok := certUser(&tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{leaf}}})
	if !ok || u.Name != "dave" || !slices.Equal(u.Groups, []string{"team"}) {
		t.Fatalf("certUser = %+v, %v; want dave in team only", u, ok)
	}
	if _, ok := certUser(&tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}}); ok {
		t.Errorf("an unverified certificate made a user")
	}
	setIdentity(h, u)
	if h.Get("Authorization") != "" || h.Get("X-Remote-User") != "dave" || !slices.Equal(h.Values("X-Remote-Group"), []string{"team"}) {
		t.Errorf("identity headers: %v", h)
	}
}
