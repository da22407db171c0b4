// Package listlimit bounds how many LISTs the server answers at once for
// users outside the system groups. A LIST's response is built whole in
// memory and serialized (and compressed) on the server's CPUs: 200 clients
// relisting a namespace that holds megabytes made every one of them a
// goroutine competing with the writes (the embedded etcd's raft and WAL
// included) and each a response buffer. Waiting LISTs hold neither CPU
// nor a response; the others, watches and writes go on.
package listlimit

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// WithLimit lets at most n LISTs of users outside the system groups be
// served at once; the others wait their turn (until their request ends).
func WithLimit(next http.Handler, n int) http.Handler {
	slots := make(chan struct{}, n)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		info, ok := genericapirequest.RequestInfoFrom(ctx)
		if !ok || !info.IsResourceRequest || info.Verb != "list" || privileged(ctx) {
			next.ServeHTTP(w, r)
			return
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		defer func() { <-slots }()
		next.ServeHTTP(w, r)
	})
}

// privileged users (the system's own: system:masters, kcp's system
// groups, system users other than service accounts and anonymous) are
// never held: a LIST they make may be part of serving another one.
func privileged(ctx context.Context) bool {
	u, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return true
	}
	if slices.ContainsFunc(u.GetGroups(), func(g string) bool { return g == user.SystemPrivilegedGroup || strings.HasPrefix(g, "system:kcp:") }) {
		return true
	}
	name := u.GetName()
	return strings.HasPrefix(name, "system:") && !strings.HasPrefix(name, "system:serviceaccount:") && name != user.Anonymous
}
