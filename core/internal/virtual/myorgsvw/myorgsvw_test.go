package myorgsvw

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

type lister struct {
	names []string
	err   error
}

func (l lister) For(context.Context, user.Info) ([]string, error) { return l.names, l.err }

// TestRewrite: only root:orgs is served, never a path leading elsewhere;
// the request reaches root:orgs with the accounts filter set.
func TestRewrite(t *testing.T) {
	var got *http.Request
	h := WithVirtualWorkspace(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r }), lister{})
	for _, tc := range []struct {
		path, want string
	}{
		{"/services/myorgs/clusters/root:orgs/apis/core.platform-mesh.io/v1alpha1/accounts", "/clusters/root:orgs/apis/core.platform-mesh.io/v1alpha1/accounts"},
		{"/services/myorgs/clusters/root:orgs:acme/apis/core.platform-mesh.io/v1alpha1/accounts", ""},
		{"/services/myorgs/clusters/root/api/v1/configmaps", ""},
		{"/services/myorgs/clusters/root:orgs/../root:orgs:acme/api/v1/configmaps", ""},
		{"/services/myorgs/clusters/root:orgs/apis/../../clusters/x/api", ""},
		{"/clusters/root:orgs/apis/core.platform-mesh.io/v1alpha1/accounts", "/clusters/root:orgs/apis/core.platform-mesh.io/v1alpha1/accounts"},
	} {
		got = nil
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "https://x"+tc.path, nil))
		switch {
		case tc.want == "" && (got != nil || rec.Code != http.StatusNotFound):
			t.Errorf("%s: served (%v) or %d, want 404", tc.path, got != nil, rec.Code)
		case tc.want != "" && (got == nil || got.URL.Path != tc.want):
			t.Errorf("%s: %v, want %s", tc.path, got, tc.want)
		}
	}
	// Off without a lister.
	got = nil
	rec := httptest.NewRecorder()
	WithVirtualWorkspace(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r }), nil).
		ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "https://x/services/myorgs/clusters/root:orgs/api", nil))
	if got != nil || rec.Code != http.StatusNotFound {
		t.Errorf("without a lister: served %v, %d", got != nil, rec.Code)
	}
}

// TestAuthorizer: reads of accounts for authenticated users, with the
// filter keeping their organizations only; nothing else.
func TestAuthorizer(t *testing.T) {
	var ctx context.Context
	h := WithVirtualWorkspace(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { ctx = r.Context() }), lister{names: []string{"acme"}})
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "https://x/services/myorgs/clusters/root:orgs/apis/core.platform-mesh.io/v1alpha1/accounts", nil))
	bob := &user.DefaultInfo{Name: "bob", Groups: []string{user.AllAuthenticated}}
	accounts := func(verb string) authorizer.AttributesRecord {
		return authorizer.AttributesRecord{User: bob, Verb: verb, APIGroup: "core.platform-mesh.io", Resource: "accounts", ResourceRequest: true}
	}
	for _, tc := range []struct {
		what  string
		attrs authorizer.AttributesRecord
		want  authorizer.Decision
	}{
		{"list", accounts("list"), authorizer.DecisionAllow},
		{"watch", accounts("watch"), authorizer.DecisionAllow},
		{"delete", accounts("delete"), authorizer.DecisionDeny},
		{"stores", authorizer.AttributesRecord{User: bob, Verb: "list", APIGroup: "core.platform-mesh.io", Resource: "stores", ResourceRequest: true}, authorizer.DecisionDeny},
		{"status", authorizer.AttributesRecord{User: bob, Verb: "get", APIGroup: "core.platform-mesh.io", Resource: "accounts", Subresource: "status", ResourceRequest: true}, authorizer.DecisionDeny},
		{"discovery", authorizer.AttributesRecord{User: bob, Verb: "get", Path: "/apis"}, authorizer.DecisionAllow},
		{"anonymous", authorizer.AttributesRecord{User: &user.DefaultInfo{Name: "system:anonymous", Groups: []string{user.AllUnauthenticated}}, Verb: "list",
			APIGroup: "core.platform-mesh.io", Resource: "accounts", ResourceRequest: true}, authorizer.DecisionDeny},
		{"impersonation is decided elsewhere", authorizer.AttributesRecord{User: bob, Verb: "impersonate", Resource: "users", ResourceRequest: true}, authorizer.DecisionNoOpinion},
	} {
		if d, _, _ := (Authorizer{}).Authorize(ctx, tc.attrs); d != tc.want {
			t.Errorf("%s: %v, want %v", tc.what, d, tc.want)
		}
	}
	if d, _, _ := (Authorizer{}).Authorize(context.Background(), accounts("list")); d != authorizer.DecisionNoOpinion {
		t.Errorf("outside the virtual workspace: %v", d)
	}
	keep, ok := clusters.ResourceFilterFrom(ctx, Resource)
	if !ok {
		t.Fatal("no accounts filter")
	}
	if !keep("c", named("acme")) || keep("c", named("globex")) {
		t.Error("the filter does not keep exactly acme")
	}

	// A lister that fails: refused, and nothing shown.
	h = WithVirtualWorkspace(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { ctx = r.Context() }), lister{err: errors.New("down")})
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "https://x/services/myorgs/clusters/root:orgs/apis/core.platform-mesh.io/v1alpha1/accounts", nil))
	if d, _, _ := (Authorizer{}).Authorize(ctx, accounts("list")); d != authorizer.DecisionDeny {
		t.Errorf("with the webhook down: %v", d)
	}
	keep, _ = clusters.ResourceFilterFrom(ctx, Resource)
	if keep("c", named("acme")) {
		t.Error("with the webhook down the filter keeps acme")
	}
}

func named(name string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name}}
}
