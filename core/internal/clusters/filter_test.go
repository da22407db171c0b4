package clusters

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

func TestWithClusterPath(t *testing.T) {
	codecs := serializer.NewCodecFactory(runtime.NewScheme())
	resolve := func(p string) (string, bool) {
		if p == "root:org" {
			return "abc123", true
		}
		return "", false
	}
	var gotPath, gotCluster string
	h := WithClusterPath(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath = r.URL.Path
		gotCluster, _ = From(r.Context())
	}), codecs, resolve)
	for _, tc := range []struct {
		url, path, cluster string
		code               int
	}{
		{"/clusters/root/api/v1/namespaces", "/api/v1/namespaces", "root", 200},
		{"/clusters/root:org/api", "/api", "abc123", 200},
		{"/clusters/%2A/api/v1/configmaps", "/api/v1/configmaps", "*", 200},
		{"/clusters/root:nope/api", "", "", 404},
		{"/clusters/Bad_Name/api", "", "", 400},
		{"/clusters/../api", "", "", 400},
		{"/healthz", "/healthz", "", 200},
	} {
		gotPath, gotCluster = "", ""
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", tc.url, nil))
		if rec.Code != tc.code || gotPath != tc.path || gotCluster != tc.cluster {
			t.Errorf("%s: got code %d path %q cluster %q; want %d %q %q", tc.url, rec.Code, gotPath, gotCluster, tc.code, tc.path, tc.cluster)
		}
	}
}
