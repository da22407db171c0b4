package apiresourceschemavw

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

func TestRewrite(t *testing.T) {
	bound := func(context.Context, string) []Schema {
		return []Schema{{Cluster: "prov", Name: "v1.widgets.example.com"}}
	}
	resolve := func(p string) (string, bool) {
		return map[string]string{"root:consumer": "cons"}[p], p == "root:consumer"
	}
	const base = "/services/apiresourceschema/root:consumer/clusters/whatever"
	for _, tc := range []struct {
		path, wantPath string
		wantCode       int
		wantFilter     bool
	}{
		{base + "/apis/apis.kcp.io/v1alpha1/apiresourceschemas", "/clusters/*/apis/apis.kcp.io/v1alpha1/apiresourceschemas", 200, true},
		{base + "/apis/apis.kcp.io/v1alpha1/apiresourceschemas/v1.widgets.example.com", "/clusters/prov/apis/apis.kcp.io/v1alpha1/apiresourceschemas/v1.widgets.example.com", 200, false},
		{base + "/apis/apis.kcp.io/v1alpha1/apiresourceschemas/other", "", 404, false},
		{base + "/apis", "/clusters/cons/apis", 200, false},
		{"/services/apiresourceschema/cons", "", 404, false},
	} {
		var got *http.Request
		h := WithVirtualWorkspace(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r }), resolve, bound)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
		if rec.Code != tc.wantCode {
			t.Errorf("GET %s: code %d, want %d (%s)", tc.path, rec.Code, tc.wantCode, rec.Body)
			continue
		}
		if tc.wantCode != 200 {
			continue
		}
		if got == nil || got.URL.Path != tc.wantPath {
			t.Errorf("GET %s: rewritten to %v, want %s", tc.path, got, tc.wantPath)
			continue
		}
		keep, ok := clusters.FilterFrom(got.Context())
		if ok != tc.wantFilter {
			t.Errorf("GET %s: filter %v, want %v", tc.path, ok, tc.wantFilter)
		}
		if ok && (!keep("prov", &apisv1alpha1.APIResourceSchema{ObjectMeta: metav1.ObjectMeta{Name: "v1.widgets.example.com"}}) ||
			keep("elsewhere", &apisv1alpha1.APIResourceSchema{ObjectMeta: metav1.ObjectMeta{Name: "v1.widgets.example.com"}})) {
			t.Errorf("GET %s: the filter keeps other schemas than the bound one", tc.path)
		}
		if tgt, _ := From(got.Context()); tgt.Consumer != "cons" {
			t.Errorf("GET %s: target %v, want consumer cons", tc.path, tgt)
		}
	}
}

func TestAuthorizer(t *testing.T) {
	var asked authorizer.Attributes
	var askedCluster string
	a := Authorizer{RBAC: authorizer.AuthorizerFunc(func(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
		asked, askedCluster = attrs, ""
		askedCluster, _ = clusters.From(ctx)
		if attrs.GetUser().GetName() == "reader" {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "", nil
	})}
	ctx := context.WithValue(context.Background(), contextKey{}, Target{Consumer: "cons"})
	req := func(name, verb, resource string) authorizer.Attributes {
		return authorizer.AttributesRecord{User: &user.DefaultInfo{Name: name}, Verb: verb, APIGroup: "apis.kcp.io", Resource: resource, ResourceRequest: true}
	}
	for _, tc := range []struct {
		attrs authorizer.Attributes
		want  authorizer.Decision
	}{
		{req("reader", "list", "apiresourceschemas"), authorizer.DecisionAllow},
		{req("reader", "watch", "apiresourceschemas"), authorizer.DecisionAllow},
		{req("reader", "delete", "apiresourceschemas"), authorizer.DecisionDeny},
		{req("reader", "list", "apiexports"), authorizer.DecisionDeny},
		{req("stranger", "get", "apiresourceschemas"), authorizer.DecisionDeny},
	} {
		if d, _, _ := a.Authorize(ctx, tc.attrs); d != tc.want {
			t.Errorf("%s %s %s: %v, want %v", tc.attrs.GetUser().GetName(), tc.attrs.GetVerb(), tc.attrs.GetResource(), d, tc.want)
		}
	}
	if d, _, _ := a.Authorize(ctx, req("reader", "get", "apiresourceschemas")); d != authorizer.DecisionAllow ||
		asked.GetResource() != "apibindings" || asked.GetVerb() != "get" || askedCluster != "cons" {
		t.Errorf("asked RBAC %v in %q, want verb get on apibindings in cons", asked, askedCluster)
	}
	if d, _, _ := a.Authorize(context.Background(), req("reader", "list", "apiresourceschemas")); d != authorizer.DecisionNoOpinion {
		t.Errorf("a request outside the virtual workspace was decided: %v", d)
	}
}
