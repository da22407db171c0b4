package serviceaccount

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestWithClusterFromToken(t *testing.T) {
	iss, _, _ := newTest(t)
	bound, _, err := iss.Bound(Subject{Cluster: "c1", Namespace: "ns", Name: "robot", UID: "u"}, nil, time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	legacy, err := iss.Legacy(Subject{Cluster: "c2", Namespace: "ns", Name: "robot", UID: "u", SecretName: "s"})
	if err != nil {
		t.Fatal(err)
	}
	var got string
	h := WithClusterFromToken(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r.URL.Path }), "/clusters/",
		func(s string) bool { return s != "" })
	for _, tt := range []struct {
		name, path, token, want string
	}{
		{"bound token, no cluster: its cluster", "/api/v1/namespaces", bound, "/clusters/c1/api/v1/namespaces"},
		{"legacy token, no cluster: its cluster", "/apis", legacy, "/clusters/c2/apis"},
		{"a cluster in the path stays", "/clusters/other/api", bound, "/clusters/other/api"},
		{"virtual workspaces stay", "/services/apiexport/x/y/clusters/*/api", bound, "/services/apiexport/x/y/clusters/*/api"},
		{"health stays", "/readyz", bound, "/readyz"},
		{"other tokens stay", "/api", "static-token", "/api"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", tt.path, nil)
			r.Header.Set("Authorization", "Bearer "+tt.token)
			h.ServeHTTP(httptest.NewRecorder(), r)
			if got != tt.want {
				t.Errorf("path = %s, want %s", got, tt.want)
			}
		})
	}
}
