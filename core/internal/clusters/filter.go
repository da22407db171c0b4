package clusters

import (
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
)

// Prefix starts every cluster-scoped URL.
const Prefix = "/clusters/"

// WithClusterPath moves the logical cluster of /clusters/<name>/<rest> into
// the request context and rewrites the path to /<rest>, so that everything
// after it sees a plain Kubernetes API request. It must run before the
// request info is parsed. A malformed name is answered with a 400 Status.
//
// resolve maps workspace paths (root:org:team, user:<name>) to cluster
// names; a path it does not know is answered with a 404 Status. A single
// segment it does not know is taken as a cluster name.
func WithClusterPath(handler http.Handler, codecs runtime.NegotiatedSerializer, resolve func(string) (string, bool)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, Prefix) {
			handler.ServeHTTP(w, r)
			return
		}
		name, trail, _ := strings.Cut(r.URL.Path[len(Prefix):], "/")
		if name != Wildcard && !IsValidPath(name) {
			err := apierrors.NewBadRequest(fmt.Sprintf("%q is not a valid logical cluster name or workspace path", name))
			responsewriters.ErrorNegotiated(err, codecs, schema.GroupVersion{}, w, r)
			return
		}
		if name != Wildcard && resolve != nil {
			cluster, ok := resolve(name)
			switch {
			case ok:
				name = cluster
			case strings.Contains(name, ":") && !strings.HasPrefix(name, "system:"):
				err := apierrors.NewNotFound(schema.GroupResource{Group: "tenancy.kcp.io", Resource: "workspaces"}, name)
				responsewriters.ErrorNegotiated(err, codecs, schema.GroupVersion{}, w, r)
				return
			}
		}
		r = r.WithContext(WithCluster(r.Context(), name))
		u := *r.URL
		u.Path = "/" + trail
		u.RawPath = ""
		r.URL = &u
		r.RequestURI = u.RequestURI()
		handler.ServeHTTP(w, r)
	})
}
