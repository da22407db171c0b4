package handlerchain

import (
	"net/http"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// ShardLevelPaths are the paths that serve the whole shard (kcp's
// shardpaths): only the bare URL is valid.
var ShardLevelPaths = map[string]bool{"/metrics": true}

// WithShardLevelPaths answers a shard-level path asked inside a logical
// cluster (/clusters/<c>/metrics, root included) with 501, for everybody,
// as kcp does: the data is the shard's, not the workspace's. The bare URL
// is authorized in root (a ClusterRoleBinding there grants scraping). It
// must run inside the cluster path filter.
func WithShardLevelPaths(handler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !ShardLevelPaths[r.URL.Path] {
			handler.ServeHTTP(w, r)
			return
		}
		cluster, ok := clusters.From(r.Context())
		switch {
		case ok && cluster != clusters.Wildcard:
			http.Error(w, "shard-level endpoint not available at workspace scope", http.StatusNotImplemented)
		case !ok:
			handler.ServeHTTP(w, r.WithContext(clusters.WithCluster(r.Context(), clusters.Root)))
		default:
			handler.ServeHTTP(w, r)
		}
	})
}
