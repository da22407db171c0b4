package server

import (
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	builtinapi "github.com/meshplane/meshplane/core/internal/apis/builtin"
	"github.com/meshplane/meshplane/core/internal/clusters"
)

// apiPaths need a logical cluster.
func isAPIPath(p string) bool {
	for _, prefix := range []string{"/api", "/apis", "/openapi"} {
		if p == prefix || strings.HasPrefix(p, prefix+"/") {
			return true
		}
	}
	return false
}

// withClusterChecks refuses API requests without a cluster and, on the
// wildcard cluster, everything but list, watch and discovery. It runs after
// authentication and authorization, right before the API handlers.
func withClusterChecks(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		cluster, ok := clusters.From(ctx)
		if ok {
			audit.AddAuditAnnotation(ctx, clusters.Annotation, cluster)
		}
		if !ok && isAPIPath(r.URL.Path) {
			fail(w, r, apierrors.NewBadRequest("the request names no logical cluster: use /clusters/<name>"+r.URL.Path))
			return
		}
		if cluster == clusters.Wildcard {
			if info, ok := genericapirequest.RequestInfoFrom(ctx); ok && info.IsResourceRequest {
				if info.Verb != "list" && info.Verb != "watch" {
					fail(w, r, apierrors.NewBadRequest("only list and watch are supported across all clusters (/clusters/*), not "+info.Verb))
					return
				}
				if info.Namespace != "" {
					fail(w, r, apierrors.NewBadRequest("a list or watch across all clusters must span all namespaces"))
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

func fail(w http.ResponseWriter, r *http.Request, err error) {
	responsewriters.ErrorNegotiated(err, builtinapi.Codecs, schema.GroupVersion{}, w, r)
}
