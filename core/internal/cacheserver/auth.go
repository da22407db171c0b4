package cacheserver

import (
	"net/http"
	"slices"
	"strings"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
)

// WithCacheServer serves the cache server's paths with cache, to shards
// only, and every other path with next. A shard is a member of
// system:masters (the shard admin's token or certificate, which shards of
// an install share): tenants, service accounts and the front proxy's
// users (the proxy never forwards system:masters) are refused, so nobody
// but a shard writes a replica the shards trust, or reads one.
func WithCacheServer(next, cache http.Handler, authn authenticator.Request) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != PathPrefix && !strings.HasPrefix(r.URL.Path, PathPrefix+"/") {
			next.ServeHTTP(w, r)
			return
		}
		resp, ok, err := authn.AuthenticateRequest(r)
		if err != nil || !ok {
			status(w, http.StatusUnauthorized, "Unauthorized", "the cache server serves shards only")
			return
		}
		if !slices.Contains(resp.User.GetGroups(), user.SystemPrivilegedGroup) {
			status(w, http.StatusForbidden, "Forbidden", "the cache server serves shards only: "+resp.User.GetName()+" is not one")
			return
		}
		cache.ServeHTTP(w, r)
	})
}
