package listlimit

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// TestWithLimit holds one tenant LIST inside the handler with a limit of
// one: another tenant's LIST (a service account's) waits outside until it
// ends, while a watch, a write and LISTs of the system's own go through.
func TestWithLimit(t *testing.T) {
	entered := make(chan string, 10)
	release := make(chan struct{})
	h := WithLimit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- r.URL.Path
		if r.URL.Path == "/hold" {
			<-release
		}
	}), 1)
	serve := func(path, verb string, u user.Info) chan struct{} {
		done := make(chan struct{})
		r := httptest.NewRequest(http.MethodGet, path, nil)
		ctx := genericapirequest.WithRequestInfo(r.Context(), &genericapirequest.RequestInfo{IsResourceRequest: true, Verb: verb, Resource: "configmaps"})
		ctx = genericapirequest.WithUser(ctx, u)
		go func() {
			defer close(done)
			h.ServeHTTP(httptest.NewRecorder(), r.WithContext(ctx))
		}()
		return done
	}
	bob := &user.DefaultInfo{Name: "bob", Groups: []string{user.AllAuthenticated}}
	robot := &user.DefaultInfo{Name: "system:serviceaccount:team:robot", Groups: []string{"system:serviceaccounts", user.AllAuthenticated}}
	holding := serve("/hold", "list", bob)
	if got := <-entered; got != "/hold" {
		t.Fatalf("entered %s, want /hold", got)
	}
	waiting := serve("/waiting", "list", robot)
	for _, c := range []struct {
		path, verb string
		u          user.Info
	}{
		{"/watch", "watch", bob},
		{"/create", "create", bob},
		{"/masters", "list", &user.DefaultInfo{Name: "admin", Groups: []string{user.SystemPrivilegedGroup}}},
		{"/controller", "list", &user.DefaultInfo{Name: "system:kube-controller-manager"}},
	} {
		<-serve(c.path, c.verb, c.u)
		if got := <-entered; got != c.path {
			t.Fatalf("while a tenant LIST holds the only slot, %s entered instead of %s", got, c.path)
		}
	}
	select {
	case got := <-entered:
		t.Fatalf("%s entered while the only slot was held", got)
	default:
	}
	close(release)
	<-holding
	<-waiting
	if got := <-entered; got != "/waiting" {
		t.Fatalf("after the slot was freed %s entered, want /waiting", got)
	}
}
