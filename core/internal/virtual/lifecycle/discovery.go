package lifecycle

import (
	"net/http"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"

	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/discovery"
)

// WithDiscovery narrows discovery on the wildcard of a lifecycle virtual
// workspace to what it serves there, LogicalClusters, as kcp's; in one
// cluster the cluster's own discovery answers. It must run after
// authentication and authorization; other requests pass through.
func WithDiscovery(next http.Handler) http.Handler {
	return discovery.WithNarrowing(next, func(r *http.Request) (discovery.Served, bool, error) {
		if _, ok := From(r.Context()); !ok || !clusters.IsWildcard(r.Context()) {
			return nil, false, nil
		}
		return discovery.Served{corev1alpha1.SchemeGroupVersion.Group: {"logicalclusters": true}}, true, nil
	})
}
