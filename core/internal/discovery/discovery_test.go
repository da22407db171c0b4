package discovery

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// cluster c1 serves built-ins (two groups) and CRDs in two groups:
//   - stable.example.com: widgets (namespaced, v1 and v1beta1, v1alpha1 not
//     served, status and scale), gadgets (cluster scoped, v1beta1 only);
//   - other.example.com: things (v2 and v1), short names;
//   - a CRD that is not established yet.
func testCRDs() map[string][]*apiextensionsv1.CustomResourceDefinition {
	return map[string][]*apiextensionsv1.CustomResourceDefinition{
		"c1": {
			newCRD("stable.example.com", "widgets", "Widget", []string{"v1beta1", "v1", "v1alpha1"}, withStatusAndScale, unservedVersion("v1alpha1")),
			newCRD("stable.example.com", "gadgets", "Gadget", []string{"v1beta1"}, clusterScoped),
			newCRD("other.example.com", "things", "Thing", []string{"v1", "v2"}, withShortNames("th")),
			newCRD("pending.example.com", "pendings", "Pending", []string{"v1"}, notEstablished),
		},
		"empty":   nil,
		"pending": {newCRD("pending.example.com", "pendings", "Pending", []string{"v1"}, notEstablished)},
	}
}

func testHandler() (*Handler, *fakeStatic, *nextHandler) {
	static, next := newFakeStatic(2, 1), &nextHandler{}
	return &Handler{CRDs: lister(testCRDs()), Static: static, Next: next}, static, next
}

func decode[T any](t *testing.T, rec *httptest.ResponseRecorder, what string) T {
	t.Helper()
	var out T
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s: decoding %q: %v", what, rec.Body.String(), err)
	}
	return out
}

func TestPassesOn(t *testing.T) {
	for _, tc := range []struct {
		name, method, cluster, path string
	}{
		{"core group", http.MethodGet, "c1", "/api"},
		{"openapi", http.MethodGet, "c1", "/openapi/v2"},
		{"a resource", http.MethodGet, "c1", "/apis/stable.example.com/v1/widgets"},
		{"not a GET", http.MethodPost, "c1", "/apis"},
		{"cluster without CRDs", http.MethodGet, "empty", "/apis"},
		{"cluster whose CRDs are not established", http.MethodGet, "pending", "/apis/pending.example.com"},
		{"built-in group", http.MethodGet, "c1", "/apis/builtin0.k8s.io"},
		{"unknown group", http.MethodGet, "c1", "/apis/unknown.example.com"},
		{"unserved version", http.MethodGet, "c1", "/apis/stable.example.com/v1alpha1"},
		{"version of another group", http.MethodGet, "c1", "/apis/stable.example.com/v2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _, next := testHandler()
			req := httptest.NewRequest(tc.method, tc.path, nil)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req.WithContext(withCluster(req, tc.cluster)))
			if rec.Code != http.StatusTeapot || len(next.paths) != 1 || next.paths[0] != tc.path {
				t.Errorf("%s %s in cluster %s: got code %d and passed on %v, want it passed on unchanged", tc.method, tc.path, tc.cluster, rec.Code, next.paths)
			}
		})
	}
}

func TestLegacyGroupList(t *testing.T) {
	h, _, _ := testHandler()
	rec := get(h, "c1", "/apis", "application/json")
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET /apis: code %d, content type %q, want 200 and application/json", rec.Code, rec.Header().Get("Content-Type"))
	}
	list := decode[metav1.APIGroupList](t, rec, "GET /apis")
	if list.Kind != "APIGroupList" || list.APIVersion != "v1" {
		t.Errorf("GET /apis: kind %q apiVersion %q, want APIGroupList v1", list.Kind, list.APIVersion)
	}
	type entry struct {
		name, preferred string
		versions        []string
	}
	var got []entry
	for _, g := range list.Groups {
		e := entry{name: g.Name, preferred: g.PreferredVersion.GroupVersion}
		for _, v := range g.Versions {
			e.versions = append(e.versions, v.GroupVersion)
		}
		got = append(got, e)
	}
	want := []entry{
		{"builtin0.k8s.io", "builtin0.k8s.io/v1", []string{"builtin0.k8s.io/v1"}},
		{"builtin1.k8s.io", "builtin1.k8s.io/v1", []string{"builtin1.k8s.io/v1"}},
		{"other.example.com", "other.example.com/v2", []string{"other.example.com/v2", "other.example.com/v1"}},
		{"stable.example.com", "stable.example.com/v1", []string{"stable.example.com/v1", "stable.example.com/v1beta1"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GET /apis: groups (built-ins first, then CRD groups by name, versions by priority)\n got %+v\nwant %+v", got, want)
	}
}

func TestLegacyGroupAndResources(t *testing.T) {
	h, _, _ := testHandler()
	rec := get(h, "c1", "/apis/stable.example.com/", "")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /apis/stable.example.com/: code %d, want 200", rec.Code)
	}
	g := decode[metav1.APIGroup](t, rec, "GET /apis/stable.example.com")
	if g.Kind != "APIGroup" || g.Name != "stable.example.com" || g.PreferredVersion.Version != "v1" || len(g.Versions) != 2 {
		t.Errorf("GET /apis/stable.example.com: got %+v, want APIGroup stable.example.com preferring v1 of two versions", g)
	}

	for _, tc := range []struct {
		path string
		want []metav1.APIResource
	}{
		{"/apis/stable.example.com/v1", []metav1.APIResource{
			{Name: "widgets", SingularName: "widget", Namespaced: true, Kind: "Widget", Verbs: resourceVerbs},
			{Name: "widgets/status", Namespaced: true, Kind: "Widget", Verbs: subresourceVerbs},
			{Name: "widgets/scale", Namespaced: true, Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: subresourceVerbs},
		}},
		{"/apis/stable.example.com/v1beta1", []metav1.APIResource{
			{Name: "gadgets", SingularName: "gadget", Namespaced: false, Kind: "Gadget", Verbs: resourceVerbs},
			{Name: "widgets", SingularName: "widget", Namespaced: true, Kind: "Widget", Verbs: resourceVerbs},
			{Name: "widgets/status", Namespaced: true, Kind: "Widget", Verbs: subresourceVerbs},
			{Name: "widgets/scale", Namespaced: true, Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: subresourceVerbs},
		}},
		{"/apis/other.example.com/v2", []metav1.APIResource{
			{Name: "things", SingularName: "thing", Namespaced: true, Kind: "Thing", Verbs: resourceVerbs, ShortNames: []string{"th"}, Categories: []string{"all"}},
		}},
	} {
		rec := get(h, "c1", tc.path, "application/json")
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s: code %d, want 200", tc.path, rec.Code)
			continue
		}
		list := decode[metav1.APIResourceList](t, rec, "GET "+tc.path)
		if list.Kind != "APIResourceList" || "/apis/"+list.GroupVersion != tc.path {
			t.Errorf("GET %s: kind %q groupVersion %q, want an APIResourceList of its group version", tc.path, list.Kind, list.GroupVersion)
		}
		if !reflect.DeepEqual(list.APIResources, tc.want) {
			t.Errorf("GET %s: resources\n got %+v\nwant %+v", tc.path, list.APIResources, tc.want)
		}
	}
}

func TestAggregated(t *testing.T) {
	h, _, _ := testHandler()
	rec := get(h, "c1", "/apis", AggregatedContentType+",application/json")
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != AggregatedContentType {
		t.Fatalf("GET /apis (aggregated): code %d, content type %q, want 200 and %s", rec.Code, rec.Header().Get("Content-Type"), AggregatedContentType)
	}
	list := decode[apidiscoveryv2.APIGroupDiscoveryList](t, rec, "GET /apis (aggregated)")
	if list.Kind != "APIGroupDiscoveryList" || list.APIVersion != "apidiscovery.k8s.io/v2" {
		t.Errorf("aggregated: kind %q apiVersion %q, want APIGroupDiscoveryList apidiscovery.k8s.io/v2", list.Kind, list.APIVersion)
	}
	var names []string
	byName := map[string]apidiscoveryv2.APIGroupDiscovery{}
	for _, g := range list.Items {
		names = append(names, g.Name)
		byName[g.Name] = g
	}
	if want := []string{"builtin0.k8s.io", "builtin1.k8s.io", "other.example.com", "stable.example.com"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("aggregated: groups %v, want %v", names, want)
	}
	if n := len(byName["builtin0.k8s.io"].Versions[0].Resources); n != 1 {
		t.Errorf("aggregated: built-in group builtin0.k8s.io has %d resources, want the static handler's 1", n)
	}
	stable := byName["stable.example.com"]
	var versions []string
	for _, v := range stable.Versions {
		versions = append(versions, v.Version)
		if v.Freshness != apidiscoveryv2.DiscoveryFreshnessCurrent {
			t.Errorf("aggregated: stable.example.com/%s freshness %q, want Current", v.Version, v.Freshness)
		}
	}
	if want := []string{"v1", "v1beta1"}; !reflect.DeepEqual(versions, want) {
		t.Fatalf("aggregated: stable.example.com versions %v, want %v (served only, by priority)", versions, want)
	}
	widgets := stable.Versions[0].Resources[0]
	wantKind := &metav1.GroupVersionKind{Group: "stable.example.com", Version: "v1", Kind: "Widget"}
	if widgets.Resource != "widgets" || widgets.SingularResource != "widget" || widgets.Scope != apidiscoveryv2.ScopeNamespace ||
		!reflect.DeepEqual(widgets.ResponseKind, wantKind) || !reflect.DeepEqual(widgets.Verbs, resourceVerbs) {
		t.Errorf("aggregated: stable.example.com/v1 first resource %+v, want namespaced widgets of kind %v", widgets, wantKind)
	}
	want := []apidiscoveryv2.APISubresourceDiscovery{
		{Subresource: "status", ResponseKind: wantKind, Verbs: subresourceVerbs},
		{Subresource: "scale", ResponseKind: &metav1.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}, Verbs: subresourceVerbs},
	}
	if !reflect.DeepEqual(widgets.Subresources, want) {
		t.Errorf("aggregated: widgets subresources\n got %+v\nwant %+v", widgets.Subresources, want)
	}
	gadgets := stable.Versions[1].Resources[0]
	if gadgets.Resource != "gadgets" || gadgets.Scope != apidiscoveryv2.ScopeCluster || len(gadgets.Subresources) != 0 {
		t.Errorf("aggregated: stable.example.com/v1beta1 first resource %+v, want cluster-scoped gadgets without subresources", gadgets)
	}
}

// TestStaticReadOnce checks that the built-in documents are read once,
// whatever the requests and clusters, and that a changed CRD is shown.
func TestStaticReadOnceAndCRDChanges(t *testing.T) {
	crds := testCRDs()
	static := newFakeStatic(1, 1)
	h := &Handler{CRDs: lister(crds), Static: static, Next: &nextHandler{}}
	crds["c2"] = crds["c1"][:1]
	for _, c := range []string{"c1", "c2", "c1"} {
		for _, accept := range []string{"application/json", AggregatedContentType} {
			if rec := get(h, c, "/apis", accept); rec.Code != http.StatusOK {
				t.Fatalf("GET /apis in %s (%s): code %d", c, accept, rec.Code)
			}
		}
	}
	if n := static.requests.Load(); n != 4 {
		t.Errorf("the static handler was asked %d times, want 4 (legacy and aggregated, of /apis and the core group, once)", n)
	}

	// The cluster's CRD changes (new resourceVersion): its documents follow.
	changed := crds["c1"][2].DeepCopy()
	changed.ResourceVersion = "2"
	changed.Status.AcceptedNames.ShortNames = []string{"thg"}
	crds["c1"][2] = changed
	list := decode[metav1.APIResourceList](t, get(h, "c1", "/apis/other.example.com/v1", ""), "GET /apis/other.example.com/v1")
	if len(list.APIResources) != 1 || !reflect.DeepEqual(list.APIResources[0].ShortNames, []string{"thg"}) {
		t.Errorf("after the CRD changed: resources %+v, want things with short name thg", list.APIResources)
	}
	// c2 did not change.
	if rec := get(h, "c2", "/apis/other.example.com", ""); rec.Code != http.StatusTeapot {
		t.Errorf("GET /apis/other.example.com in c2 (no such CRD): code %d, want it passed on", rec.Code)
	}
}

func TestStaticFailureIsAStatus(t *testing.T) {
	for _, tc := range []struct {
		name   string
		static http.HandlerFunc
	}{
		{"error code", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusServiceUnavailable) }},
		{"not JSON", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<html>")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &Handler{CRDs: lister(testCRDs()), Static: tc.static, Next: &nextHandler{}}
			rec := get(h, "c1", "/apis", "application/json")
			status := decode[metav1.Status](t, rec, "GET /apis")
			if rec.Code != http.StatusInternalServerError || status.Kind != "Status" || status.Code != http.StatusInternalServerError ||
				status.Reason != metav1.StatusReasonInternalError {
				t.Errorf("GET /apis with a failing static handler: code %d, body %s; want a 500 Status with reason InternalError", rec.Code, rec.Body)
			}
		})
	}
}

// TestConcurrentRequests serves clusters in parallel (run with -race).
func TestConcurrentRequests(t *testing.T) {
	h, static, _ := testHandler()
	want := map[string][]byte{}
	for _, accept := range []string{"application/json", AggregatedContentType} {
		want[accept] = get(h, "c1", "/apis", accept).Body.Bytes()
	}
	h, static, _ = testHandler()
	errs := make(chan string, 64)
	done := make(chan struct{})
	for i := range 16 {
		go func() {
			defer func() { done <- struct{}{} }()
			for j := range 20 {
				accept := []string{"application/json", AggregatedContentType}[(i+j)%2]
				if rec := get(h, "c1", "/apis", accept); !reflect.DeepEqual(rec.Body.Bytes(), want[accept]) {
					errs <- "GET /apis (" + accept + ") answered " + rec.Body.String()
				}
			}
		}()
	}
	for range 16 {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if n := static.requests.Load(); n != 4 {
		t.Errorf("the static handler was asked %d times under concurrent requests, want 4", n)
	}
}

// TestUncachedWithoutIdentity checks that CRDs without UID and
// resourceVersion (nothing tells their versions apart) are never served
// from the cache.
func TestUncachedWithoutIdentity(t *testing.T) {
	crd := newCRD("stable.example.com", "widgets", "Widget", []string{"v1"})
	crd.UID, crd.ResourceVersion = "", ""
	h := &Handler{CRDs: lister(map[string][]*apiextensionsv1.CustomResourceDefinition{"c1": {crd}}), Static: newFakeStatic(1, 1), Next: &nextHandler{}}
	if rec := get(h, "c1", "/apis/stable.example.com/v1", ""); rec.Code != http.StatusOK {
		t.Fatalf("GET /apis/stable.example.com/v1: code %d", rec.Code)
	}
	crd.Status.AcceptedNames.ShortNames = []string{"wd"}
	list := decode[metav1.APIResourceList](t, get(h, "c1", "/apis/stable.example.com/v1", ""), "GET after an in-place change")
	if len(list.APIResources) != 1 || !reflect.DeepEqual(list.APIResources[0].ShortNames, []string{"wd"}) {
		t.Errorf("after changing a CRD without UID and resourceVersion: resources %+v, want widgets with short name wd", list.APIResources)
	}
}

// TestBoundCoreResources checks that a bound resource of the core group
// (services) joins the built-in ones in /api/v1 and the aggregated /api,
// and that /apis shows no group "" for it; a cluster without one passes
// the core group's documents on.
func TestBoundCoreResources(t *testing.T) {
	crds := map[string][]*apiextensionsv1.CustomResourceDefinition{
		"c1": {newCRD("", "services", "Service", []string{"v1"}, withStatusAndScale)},
		"c2": testCRDs()["c1"],
	}
	h := &Handler{CRDs: lister(crds), Static: newFakeStatic(1, 1), Next: &nextHandler{}}
	list := decode[metav1.APIResourceList](t, get(h, "c1", "/api/v1", ""), "GET /api/v1")
	var names []string
	for _, r := range list.APIResources {
		names = append(names, r.Name)
	}
	if want := []string{"configmaps", "services", "services/status", "services/scale"}; !reflect.DeepEqual(names, want) {
		t.Errorf("/api/v1 lists %v, want %v", names, want)
	}
	if list.GroupVersion != "v1" {
		t.Errorf("/api/v1 has groupVersion %q, want v1", list.GroupVersion)
	}
	agg := decode[apidiscoveryv2.APIGroupDiscoveryList](t, get(h, "c1", "/api", AggregatedContentType), "GET /api (aggregated)")
	names = nil
	for _, r := range agg.Items[0].Versions[0].Resources {
		names = append(names, r.Resource+"/"+r.ResponseKind.Kind)
	}
	if want := []string{"configmaps/ConfigMap", "services/Service"}; len(agg.Items) != 1 || !reflect.DeepEqual(names, want) {
		t.Errorf("aggregated /api lists %v (%d groups), want %v", names, len(agg.Items), want)
	}
	groups := decode[metav1.APIGroupList](t, get(h, "c1", "/apis", ""), "GET /apis")
	for _, g := range groups.Groups {
		if g.Name == "" {
			t.Errorf("/apis lists the core group: %+v", g)
		}
	}
	for _, path := range []string{"/api/v1", "/api"} {
		if rec := get(h, "c2", path, AggregatedContentType); rec.Code != http.StatusTeapot {
			t.Errorf("GET %s in a cluster without bound core resources: code %d, want it passed on", path, rec.Code)
		}
	}
}
