package apiexportvw

import (
	"net/http"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/meshplane/meshplane/core/internal/discovery"
)

// WithDiscovery narrows discovery through the virtual workspace to what
// the export serves there, as kcp's virtual workspace shows it: the
// exported resources, the claimed resources and APIBindings (read by
// providers). It must run after authentication and authorization; other
// requests pass through.
func WithDiscovery(next http.Handler, exports Exports) http.Handler {
	return discovery.WithNarrowing(next, func(r *http.Request) (discovery.Served, bool, error) {
		t, ok := From(r.Context())
		if !ok {
			return nil, false, nil
		}
		export, err := exports.Export(r.Context(), t.Cluster, t.Name)
		if err != nil {
			return nil, false, apierrors.NewNotFound(apisv1alpha2.Resource("apiexports"), t.Name)
		}
		return servedBy(export), true, nil
	})
}

// servedBy returns the resources the export serves, by group.
func servedBy(export *apisv1alpha2.APIExport) discovery.Served {
	out := discovery.Served{apisv1alpha2.SchemeGroupVersion.Group: {"apibindings": true}}
	add := func(group, resource string) {
		if out[group] == nil {
			out[group] = map[string]bool{}
		}
		out[group][resource] = true
	}
	for _, r := range export.Spec.Resources {
		add(r.Group, r.Name)
	}
	for _, c := range export.Spec.PermissionClaims {
		add(c.Group, c.Resource)
	}
	return out
}
