package server

import (
	"net/http"
	"strings"

	"github.com/meshplane/meshplane/core/internal/apiexport"
	"github.com/meshplane/meshplane/core/internal/clusters"
)

// withBuiltinIdentities serves, as kcp does, a list or watch across all
// clusters of a kcp resource the server serves itself named with the
// identity of root's export of it
// (/clusters/*/apis/tenancy.kcp.io/v1alpha1/workspaces:<identity>): the
// identity is checked and dropped. Any other identity stays, and the
// request finds nothing (404). It runs after the cluster path filter,
// before the request is parsed.
func withBuiltinIdentities(next http.Handler, exports *apiexport.Exports) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if cluster, ok := clusters.From(r.Context()); !ok || cluster != clusters.Wildcard || !strings.HasPrefix(r.URL.Path, "/apis/") {
			next.ServeHTTP(w, r)
			return
		}
		segs := strings.Split(r.URL.Path, "/") // "", apis, group, version, resource:identity, ...
		if len(segs) < 5 || !exports.BuiltinGroup(segs[2]) {
			next.ServeHTTP(w, r)
			return
		}
		resource, identity, found := strings.Cut(segs[4], ":")
		if !found || !exports.BuiltinIdentity(r.Context(), segs[2], resource, identity) {
			next.ServeHTTP(w, r)
			return
		}
		segs[4] = resource
		u := *r.URL
		u.Path, u.RawPath = strings.Join(segs, "/"), ""
		r2 := r.Clone(r.Context())
		r2.URL = &u
		r2.RequestURI = u.RequestURI()
		next.ServeHTTP(w, r2)
	})
}
