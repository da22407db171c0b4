package handlerchain

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

func TestWithShardLevelPaths(t *testing.T) {
	for _, tc := range []struct {
		path        string
		cluster     string // "" for none
		wantCode    int
		wantCluster string // cluster the next handler sees
	}{
		{"/metrics", "", http.StatusOK, clusters.Root},
		{"/metrics", clusters.Root, http.StatusNotImplemented, ""},
		{"/metrics", "abc", http.StatusNotImplemented, ""},
		{"/metrics", clusters.Wildcard, http.StatusOK, clusters.Wildcard},
		{"/metrics/slis", "abc", http.StatusOK, "abc"},
		{"/api", "abc", http.StatusOK, "abc"},
	} {
		var seen string
		next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen, _ = clusters.From(r.Context()) })
		req := httptest.NewRequest(http.MethodGet, tc.path, nil)
		if tc.cluster != "" {
			req = req.WithContext(clusters.WithCluster(req.Context(), tc.cluster))
		}
		rec := httptest.NewRecorder()
		WithShardLevelPaths(next).ServeHTTP(rec, req)
		if rec.Code != tc.wantCode || seen != tc.wantCluster {
			t.Errorf("GET %s in %q: code %d, next saw cluster %q; want %d and %q", tc.path, tc.cluster, rec.Code, seen, tc.wantCode, tc.wantCluster)
		}
	}
}
