package apiexportvw

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/meshplane/meshplane/core/internal/apiexport"
	"github.com/meshplane/meshplane/core/internal/clusters"
)

// fakeExports knows one export, root:provider|widgets, exporting
// widgets.example.com and claiming configmaps and another export's
// things.other.com.
type fakeExports struct {
	identity string
	accepted []acceptCall // what Accepted was asked
}

type acceptCall struct {
	consumer, exportCluster, exportName, group, resource string
	exported                                             bool
}

func (f *fakeExports) Export(_ context.Context, cluster, name string) (*apisv1alpha2.APIExport, error) {
	if cluster != "root:provider" || name != "widgets" {
		return nil, errors.New("not found")
	}
	return &apisv1alpha2.APIExport{
		Spec: apisv1alpha2.APIExportSpec{
			Resources: []apisv1alpha2.ResourceSchema{{Group: "example.com", Name: "widgets"}},
			PermissionClaims: []apisv1alpha2.PermissionClaim{
				{GroupResource: apisv1alpha2.GroupResource{Group: "", Resource: "configmaps"}},
				{GroupResource: apisv1alpha2.GroupResource{Group: "other.com", Resource: "things"}, IdentityHash: "otherid"},
			},
		},
		Status: apisv1alpha2.APIExportStatus{IdentityHash: f.identity},
	}, nil
}

func (f *fakeExports) Resources(context.Context, string, string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return nil, nil
}

func (f *fakeExports) Binding(context.Context, string, string, string) (*apisv1alpha2.APIBinding, bool) {
	return nil, false
}

func (f *fakeExports) Accepted(consumer, exportCluster, exportName, group, resource string, exported bool) bool {
	f.accepted = append(f.accepted, acceptCall{consumer, exportCluster, exportName, group, resource, exported})
	return consumer == "consumer-a"
}

// Claim answers for consumer-a a claim that picks every object.
func (f *fakeExports) Claim(consumer, exportCluster, exportName, group, resource string) (apiexport.Claim, bool) {
	f.accepted = append(f.accepted, acceptCall{consumer, exportCluster, exportName, group, resource, false})
	return apiexport.Claim{}, consumer == "consumer-a"
}

// Serves: consumer-a serves the export's widgets.
func (f *fakeExports) Serves(consumer, group, resource, identity string) bool {
	return consumer == "consumer-a" && group == "example.com" && resource == "widgets" && identity == f.identity
}

// BuiltinGroup: the kcp groups the server serves itself.
func (f *fakeExports) BuiltinGroup(group string) bool { return group == "tenancy.kcp.io" }

// seen is what the next handler got.
type seen struct {
	called     bool
	path, uri  string
	target     Target
	hasTarget  bool
	filter     clusters.Filter
	hasFilter  bool
	rawPathSet bool
}

func serve(t *testing.T, exports Exports, target string) (*httptest.ResponseRecorder, *seen) {
	t.Helper()
	s := &seen{}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.called, s.path, s.uri, s.rawPathSet = true, r.URL.Path, r.RequestURI, r.URL.RawPath != ""
		s.target, s.hasTarget = From(r.Context())
		s.filter, s.hasFilter = clusters.FilterFrom(r.Context())
	})
	rec := httptest.NewRecorder()
	WithVirtualWorkspace(next, exports).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec, s
}

func TestRewrite(t *testing.T) {
	for _, tc := range []struct {
		name, target, identity string
		wantPath, wantURI      string
		wantFilter             bool
	}{
		{"one consumer", "/services/apiexport/root:provider/widgets/clusters/abc/apis/example.com/v1/namespaces/default/widgets/w", "id1",
			"/clusters/abc/apis/example.com/v1/namespaces/default/widgets/w", "", false},
		{"wildcard exported resource", "/services/apiexport/root:provider/widgets/clusters/*/apis/example.com/v1/widgets?watch=true", "id1",
			"/clusters/*/apis/example.com/v1/widgets:id1", "/clusters/*/apis/example.com/v1/widgets:id1?watch=true", true},
		{"wildcard exported resource named with an identity", "/services/apiexport/root:provider/widgets/clusters/*/apis/example.com/v1/widgets:stale", "id1",
			"/clusters/*/apis/example.com/v1/widgets:id1", "", true},
		{"wildcard claim of another export", "/services/apiexport/root:provider/widgets/clusters/*/apis/other.com/v1/things", "id1",
			"/clusters/*/apis/other.com/v1/things:otherid", "", true},
		{"wildcard claim of a core resource", "/services/apiexport/root:provider/widgets/clusters/*/api/v1/configmaps", "id1",
			"/clusters/*/api/v1/configmaps", "", true},
		{"wildcard discovery", "/services/apiexport/root:provider/widgets/clusters/*/apis", "id1",
			"/clusters/*/apis", "", true},
		{"wildcard before the export has an identity", "/services/apiexport/root:provider/widgets/clusters/*/apis/example.com/v1/widgets", "",
			"/clusters/*/apis/example.com/v1/widgets", "", true},
		{"wildcard of an unknown export", "/services/apiexport/root:provider/gadgets/clusters/*/apis/example.com/v1/widgets", "id1",
			"/clusters/*/apis/example.com/v1/widgets", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, s := serve(t, &fakeExports{identity: tc.identity}, tc.target)
			if !s.called {
				t.Fatalf("GET %s: not passed on (code %d: %s)", tc.target, rec.Code, rec.Body)
			}
			wantURI := tc.wantURI
			if wantURI == "" {
				wantURI = tc.wantPath
			}
			wantURI = strings.ReplaceAll(wantURI, "*", "%2A") // as url.URL.RequestURI escapes it
			if s.path != tc.wantPath || s.uri != wantURI || s.rawPathSet {
				t.Errorf("GET %s: rewritten to path %q, request URI %q (raw path set: %v); want %q, %q", tc.target, s.path, s.uri, s.rawPathSet, tc.wantPath, wantURI)
			}
			if !s.hasTarget || s.target.Cluster != "root:provider" {
				t.Errorf("GET %s: context target %+v (%v), want the export in root:provider", tc.target, s.target, s.hasTarget)
			}
			if s.hasFilter != tc.wantFilter {
				t.Errorf("GET %s: consumer filter in the context %v, want %v (wildcard only)", tc.target, s.hasFilter, tc.wantFilter)
			}
		})
	}
}

func TestPassesOtherPathsOn(t *testing.T) {
	for _, target := range []string{"/clusters/root/api/v1/configmaps", "/services/initializingworkspaces/root:t/clusters/*/apis", "/services/apiexportx/a/b/clusters/c"} {
		_, s := serve(t, &fakeExports{}, target)
		if !s.called || s.path != target || s.hasTarget {
			t.Errorf("GET %s: passed on as %q with target %v (called %v), want it unchanged and without target", target, s.path, s.hasTarget, s.called)
		}
	}
}

func TestBadPaths(t *testing.T) {
	for _, tc := range []struct {
		target string
		code   int32
		reason metav1.StatusReason
	}{
		{"/services/apiexport/", http.StatusNotFound, metav1.StatusReasonNotFound},
		{"/services/apiexport/root:provider", http.StatusNotFound, metav1.StatusReasonNotFound},
		{"/services/apiexport/root:provider/widgets", http.StatusNotFound, metav1.StatusReasonNotFound},
		{"/services/apiexport/root:provider/widgets/apis/example.com/v1", http.StatusNotFound, metav1.StatusReasonNotFound},
		{"/services/apiexport/Root/widgets/clusters/*/apis", http.StatusBadRequest, metav1.StatusReasonBadRequest},
		{"/services/apiexport/../widgets/clusters/*/apis", http.StatusBadRequest, metav1.StatusReasonBadRequest},
		{"/services/apiexport/root:provider/Widgets_1/clusters/*/apis", http.StatusBadRequest, metav1.StatusReasonBadRequest},
		{"/services/apiexport/root:provider//clusters/*/apis", http.StatusBadRequest, metav1.StatusReasonBadRequest},
	} {
		rec, s := serve(t, &fakeExports{identity: "id1"}, tc.target)
		var status metav1.Status
		if err := json.Unmarshal(rec.Body.Bytes(), &status); err != nil || s.called || rec.Code != int(tc.code) ||
			status.Kind != "Status" || status.Code != tc.code || status.Reason != tc.reason {
			t.Errorf("GET %s: code %d, passed on %v, body %s; want a %d Status with reason %s", tc.target, rec.Code, s.called, rec.Body, tc.code, tc.reason)
		}
	}
}

// TestWildcardFilter checks the consumer filter the wildcard puts in the
// context: APIBindings of this export only, other objects by consumer
// through Accepted.
func TestWildcardFilter(t *testing.T) {
	exports := &fakeExports{identity: "id1"}
	_, s := serve(t, exports, "/services/apiexport/root:provider/widgets/clusters/*/apis/apis.kcp.io/v1alpha2/apibindings")
	if !s.hasFilter {
		t.Fatalf("no consumer filter in the context of a wildcard list of APIBindings")
	}
	binding := func(export, exportCluster string) *apisv1alpha2.APIBinding {
		return &apisv1alpha2.APIBinding{
			Spec:   apisv1alpha2.APIBindingSpec{Reference: apisv1alpha2.BindingReference{Export: &apisv1alpha2.ExportBindingReference{Name: export}}},
			Status: apisv1alpha2.APIBindingStatus{APIExportClusterName: exportCluster},
		}
	}
	for _, tc := range []struct {
		name string
		b    *apisv1alpha2.APIBinding
		want bool
	}{
		{"binding of this export", binding("widgets", "root:provider"), true},
		{"binding of another export", binding("gadgets", "root:provider"), false},
		{"binding of a same-named export elsewhere", binding("widgets", "root:elsewhere"), false},
		{"binding by reference without export", &apisv1alpha2.APIBinding{}, false},
	} {
		if got := s.filter("consumer-b", tc.b); got != tc.want {
			t.Errorf("filter on APIBindings, %s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if s.filter("consumer-a", &corev1.ConfigMap{}) {
		t.Errorf("filter on APIBindings kept a ConfigMap")
	}
	if len(exports.accepted) != 0 {
		t.Errorf("filter on APIBindings asked Accepted %v, want it decided by the binding alone", exports.accepted)
	}

	_, s = serve(t, exports, "/services/apiexport/root:provider/widgets/clusters/*/apis/other.com/v1/things")
	thing := &unstructured.Unstructured{}
	if !s.filter("consumer-a", thing) || s.filter("consumer-b", thing) {
		t.Errorf("filter on claimed things: consumer-a %v, consumer-b %v; want what Claim answers (true, false)", s.filter("consumer-a", thing), s.filter("consumer-b", thing))
	}
	want := acceptCall{"consumer-a", "root:provider", "widgets", "other.com", "things", false}
	if len(exports.accepted) == 0 || exports.accepted[0] != want {
		t.Errorf("filter on claimed things asked Accepted %+v, want first %+v", exports.accepted, want)
	}

	exports.accepted = nil
	_, s = serve(t, exports, "/services/apiexport/root:provider/widgets/clusters/*/apis/example.com/v1/widgets")
	s.filter("consumer-a", nil)
	if want := (acceptCall{"consumer-a", "root:provider", "widgets", "example.com", "widgets", true}); len(exports.accepted) != 1 || exports.accepted[0] != want {
		t.Errorf("filter on exported widgets asked Accepted %+v, want %+v", exports.accepted, want)
	}
}

func TestPlain(t *testing.T) {
	ctx := context.WithValue(context.Background(), contextKey{}, Target{Cluster: "provider", Name: "export"})
	if _, ok := From(ctx); !ok {
		t.Fatal("no target in the virtual workspace context")
	}
	plain := Plain(ctx)
	if _, ok := From(plain); ok {
		t.Error("Plain kept the virtual workspace target")
	}
	// The authorizer does not decide plain requests.
	if d, _, _ := (Authorizer{}).Authorize(plain, nil); d != authorizer.DecisionNoOpinion {
		t.Errorf("a plain request was decided by the virtual workspace: %v", d)
	}
	if Plain(context.Background()) == nil {
		t.Error("Plain of a plain context")
	}
}
