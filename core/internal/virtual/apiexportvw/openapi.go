package apiexportvw

import (
	"encoding/json"
	"net/http"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/meshplane/meshplane/core/internal/discovery"
	"github.com/meshplane/meshplane/core/internal/openapi/clusterspec"
)

// WithOpenAPI serves OpenAPI v3 through the virtual workspace as kcp's
// does: the index lists the group versions the export serves there (its
// resources, the claimed ones, APIBindings), and the document of an
// exported group version holds every exported kind of it, built from the
// export's schemas. static serves the built-in documents; next the
// documents of the request's cluster and everything else.
func WithOpenAPI(next http.Handler, exports Exports, static http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t, ok := From(r.Context())
		p := strings.TrimSuffix(r.URL.Path, "/")
		if !ok || r.Method != http.MethodGet || !strings.HasPrefix(p, "/openapi/v3") {
			next.ServeHTTP(w, r)
			return
		}
		export, err := exports.Export(r.Context(), t.Cluster, t.Name)
		if err != nil {
			fail(w, r, apierrors.NewNotFound(schema.GroupResource{Group: "apis.kcp.io", Resource: "apiexports"}, t.Name))
			return
		}
		crds, err := exports.Resources(r.Context(), t.Cluster, t.Name)
		if err != nil {
			fail(w, r, apierrors.NewInternalError(err))
			return
		}
		served := servedBy(export)
		h := &clusterspec.Handler{CRDs: fixedCRDs(crds), Static: static, Next: next}
		if p != "/openapi/v3" {
			if !servedPath(strings.TrimPrefix(p, "/openapi/v3/"), served) {
				fail(w, r, apierrors.NewNotFound(schema.GroupResource{}, p))
				return
			}
			h.ServeHTTP(w, r)
			return
		}
		rec := discovery.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code() != http.StatusOK {
			rec.CopyTo(w, rec.Body())
			return
		}
		var index struct {
			Paths map[string]struct {
				ServerRelativeURL string `json:"serverRelativeURL"`
			} `json:"paths"`
		}
		if err := json.Unmarshal(rec.Body(), &index); err != nil {
			fail(w, r, apierrors.NewInternalError(err))
			return
		}
		// The documents are under the virtual workspace's prefix.
		prefix := "/services/apiexport/" + t.Cluster + "/" + t.Name
		for path, v := range index.Paths {
			if !servedPath(path, served) {
				delete(index.Paths, path)
				continue
			}
			v.ServerRelativeURL = prefix + v.ServerRelativeURL
			index.Paths[path] = v
		}
		b, err := json.Marshal(index)
		if err != nil {
			fail(w, r, apierrors.NewInternalError(err))
			return
		}
		rec.CopyTo(w, b)
	})
}

// servedPath reports whether an OpenAPI v3 path is listed through the
// virtual workspace, as kcp lists them: the discovery documents (api when
// the core group is served, apis, version) and the groups and group
// versions the export serves there.
func servedPath(path string, served discovery.Served) bool {
	parts := strings.Split(path, "/")
	switch {
	case path == "apis" || path == "version":
		return true
	case parts[0] == "api" && len(parts) <= 2:
		return served[""] != nil
	case parts[0] == "apis" && (len(parts) == 2 || len(parts) == 3):
		return served[parts[1]] != nil
	}
	return false
}

// fixedCRDs lists the same CRDs for every cluster.
type fixedCRDs []*apiextensionsv1.CustomResourceDefinition

func (f fixedCRDs) List(string) []*apiextensionsv1.CustomResourceDefinition { return f }
