package clusterspec

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/meshplane/meshplane/core/pkg/clusters"
)

func testCRDs() crdList {
	pending := newCRD("pending.example.com", "pendings", "Pending", "v1")
	pending.Status.Conditions = nil
	unserved := newCRD("stable.example.com", "gadgets", "Gadget", "v1", "v1alpha1")
	unserved.Spec.Versions[1].Served = false
	return crdList{
		"c1": {
			newCRD("stable.example.com", "widgets", "Widget", "v1", "v1beta1"),
			unserved,
			newCRD("other.example.com", "things", "Thing", "v2"),
			pending,
		},
		"c2":    {newCRD("other.example.com", "things", "Thing", "v2")},
		"empty": nil,
	}
}

func decode[T any](t *testing.T, rec *httptest.ResponseRecorder, what string) T {
	t.Helper()
	var out T
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s: decoding %.200q: %v", what, rec.Body.String(), err)
	}
	return out
}

func TestPassesOn(t *testing.T) {
	static := newStaticOpenAPI(t)
	for _, tc := range []struct {
		name, method, cluster, path, accept string
	}{
		{"no cluster", http.MethodGet, "", "/openapi/v2", ""},
		{"not a GET", http.MethodPost, "c1", "/openapi/v2", ""},
		{"not OpenAPI", http.MethodGet, "c1", "/apis", ""},
		{"v2 of a cluster without CRDs", http.MethodGet, "empty", "/openapi/v2", ""},
		{"v2 as protobuf", http.MethodGet, "c1", "/openapi/v2", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"},
		{"v3 of a built-in group", http.MethodGet, "c1", "/openapi/v3/apis/rbac.authorization.k8s.io/v1", ""},
		{"v3 of the core group", http.MethodGet, "c1", "/openapi/v3/api/v1", ""},
		{"v3 of an unserved version", http.MethodGet, "c1", "/openapi/v3/apis/stable.example.com/v1alpha1", ""},
		{"v3 of a CRD that is not established", http.MethodGet, "c1", "/openapi/v3/apis/pending.example.com/v1", ""},
		{"v3 of another cluster's CRD", http.MethodGet, "c2", "/openapi/v3/apis/stable.example.com/v1", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := &nextHandler{}
			h := &Handler{CRDs: testCRDs(), Static: static, Next: next}
			rec := get(h, tc.cluster, tc.path, tc.accept)
			if tc.method != http.MethodGet {
				req := httptest.NewRequest(tc.method, tc.path, nil)
				rec = httptest.NewRecorder()
				h.ServeHTTP(rec, req.WithContext(clusters.WithCluster(req.Context(), tc.cluster)))
			}
			if rec.Code != http.StatusTeapot || len(next.paths) != 1 || next.paths[0] != tc.path {
				t.Errorf("%s %s in cluster %q (Accept %q): got code %d and passed on %v, want it passed on unchanged",
					tc.method, tc.path, tc.cluster, tc.accept, rec.Code, next.paths)
			}
		})
	}
}

func TestV3Index(t *testing.T) {
	crds := testCRDs()
	h := &Handler{CRDs: crds, Static: newStaticOpenAPI(t), Next: &nextHandler{}}
	rec := get(h, "c1", "/openapi/v3", "")
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET /openapi/v3: code %d, content type %q, want 200 application/json", rec.Code, rec.Header().Get("Content-Type"))
	}
	index := decode[v3Index](t, rec, "GET /openapi/v3")
	if got, want := index.Paths["apis/rbac.authorization.k8s.io/v1"].ServerRelativeURL,
		"/clusters/c1/openapi/v3/apis/rbac.authorization.k8s.io/v1?hash=ABC"; got != want {
		t.Errorf("index: built-in rbac URL %q, want %q (static, under the cluster prefix)", got, want)
	}
	for _, gv := range []string{"apis/stable.example.com/v1", "apis/stable.example.com/v1beta1", "apis/other.example.com/v2"} {
		if u := index.Paths[gv].ServerRelativeURL; !strings.HasPrefix(u, "/clusters/c1/openapi/v3/"+gv+"?hash=") || len(u) <= len("/clusters/c1/openapi/v3/"+gv+"?hash=") {
			t.Errorf("index: %s URL %q, want /clusters/c1/openapi/v3/%s?hash=<hash>", gv, u, gv)
		}
	}
	for _, gv := range []string{"apis/stable.example.com/v1alpha1", "apis/pending.example.com/v1"} {
		if u, ok := index.Paths[gv]; ok {
			t.Errorf("index: lists %s (%q), an unserved or not established version", gv, u.ServerRelativeURL)
		}
	}
	if n := len(index.Paths); n != 8+3 {
		t.Errorf("index: %d paths, want 8 built-in and 3 CRD group versions", n)
	}

	// A changed CRD changes the hash of its group version only.
	before := index.Paths
	changed := crds["c1"][0].DeepCopy()
	changed.ResourceVersion = "2"
	crds["c1"][0] = changed
	after := decode[v3Index](t, get(h, "c1", "/openapi/v3", ""), "GET /openapi/v3 after a change").Paths
	if before["apis/stable.example.com/v1"] == after["apis/stable.example.com/v1"] {
		t.Errorf("index: hash of stable.example.com/v1 stayed %q after its CRD changed", after["apis/stable.example.com/v1"].ServerRelativeURL)
	}
	if before["apis/other.example.com/v2"] != after["apis/other.example.com/v2"] {
		t.Errorf("index: hash of other.example.com/v2 changed (%q -> %q) though its CRD did not",
			before["apis/other.example.com/v2"].ServerRelativeURL, after["apis/other.example.com/v2"].ServerRelativeURL)
	}
}

func TestV3GroupVersion(t *testing.T) {
	crds := testCRDs()
	h := &Handler{CRDs: crds, Static: newStaticOpenAPI(t), Next: &nextHandler{}}
	rec := get(h, "c1", "/openapi/v3/apis/stable.example.com/v1", "")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /openapi/v3/apis/stable.example.com/v1: code %d: %.300s", rec.Code, rec.Body)
	}
	doc := decode[spec3.OpenAPI](t, rec, "v3 stable.example.com/v1")
	for _, name := range []string{"com.example.stable.v1.Widget", "com.example.stable.v1.Gadget"} {
		if _, ok := doc.Components.Schemas[name]; !ok {
			t.Errorf("v3 stable.example.com/v1: no schema %s among %d", name, len(doc.Components.Schemas))
		}
	}
	if _, ok := doc.Paths.Paths["/apis/stable.example.com/v1/namespaces/{namespace}/widgets/{name}"]; !ok {
		t.Errorf("v3 stable.example.com/v1: no path of a single widget")
	}
	if again := get(h, "c1", "/openapi/v3/apis/stable.example.com/v1", ""); !bytes.Equal(again.Body.Bytes(), rec.Body.Bytes()) {
		t.Errorf("v3 stable.example.com/v1: a second request answered a different document")
	}

	// A new version of the CRD (new schema, new resourceVersion) is served.
	changed := crds["c1"][0].DeepCopy()
	changed.ResourceVersion = "2"
	changed.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["shape"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
	crds["c1"][0] = changed
	doc = decode[spec3.OpenAPI](t, get(h, "c1", "/openapi/v3/apis/stable.example.com/v1", ""), "v3 after a change")
	if _, ok := doc.Components.Schemas["com.example.stable.v1.Widget"].Properties["spec"].Properties["shape"]; !ok {
		t.Errorf("v3 stable.example.com/v1 after the CRD changed: Widget spec has no property shape")
	}
}

func TestV2(t *testing.T) {
	crds := testCRDs()
	static := newStaticOpenAPI(t)
	h := &Handler{CRDs: crds, Static: static, Next: &nextHandler{}}
	for _, accept := range []string{"", "application/json", "application/json;q=0.9,application/com.github.proto-openapi.spec.v2@v1.0+protobuf", "*/*"} {
		rec := get(h, "c1", "/openapi/v2", accept)
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("GET /openapi/v2 (Accept %q): code %d, content type %q", accept, rec.Code, rec.Header().Get("Content-Type"))
		}
		doc := decode[spec.Swagger](t, rec, "v2")
		for _, name := range []string{"io.k8s.api.core.v1.ConfigMap", "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
			"com.example.stable.v1.Widget", "com.example.stable.v1beta1.Widget", "com.example.other.v2.Thing"} {
			if _, ok := doc.Definitions[name]; !ok {
				t.Errorf("v2 (Accept %q): no definition %s (built-ins and every served CRD version)", accept, name)
			}
		}
		for _, name := range []string{"com.example.stable.v1alpha1.Gadget", "com.example.pending.v1.Pending"} {
			if _, ok := doc.Definitions[name]; ok {
				t.Errorf("v2 (Accept %q): has definition %s of an unserved or not established version", accept, name)
			}
		}
	}
	if n := static.requests.Load(); n != 1 {
		t.Errorf("the static v2 document was read %d times, want once", n)
	}

	// c2 serves only things, and a change of c1 shows in c1.
	doc := decode[spec.Swagger](t, get(h, "c2", "/openapi/v2", ""), "v2 of c2")
	if _, ok := doc.Definitions["com.example.stable.v1.Widget"]; ok {
		t.Errorf("v2 of c2 has c1's Widget")
	}
	changed := crds["c1"][2].DeepCopy()
	changed.ResourceVersion = "7"
	changed.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["shape"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
	crds["c1"][2] = changed
	doc = decode[spec.Swagger](t, get(h, "c1", "/openapi/v2", ""), "v2 after a change")
	if _, ok := doc.Definitions["com.example.other.v2.Thing"].Properties["spec"].Properties["shape"]; !ok {
		t.Errorf("v2 after the Thing CRD changed: Thing spec has no property shape")
	}
}

func TestStaticFailureIsAStatus(t *testing.T) {
	for _, path := range []string{"/openapi/v2", "/openapi/v3"} {
		for name, static := range map[string]http.HandlerFunc{
			"error code": func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusServiceUnavailable) },
			"not JSON":   func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<html>")) },
		} {
			h := &Handler{CRDs: testCRDs(), Static: static, Next: &nextHandler{}}
			rec := get(h, "c1", path, "application/json")
			status := decode[metav1.Status](t, rec, "GET "+path)
			if rec.Code != http.StatusInternalServerError || status.Kind != "Status" || status.Reason != metav1.StatusReasonInternalError {
				t.Errorf("GET %s with a static handler failing (%s): code %d, body %s; want a 500 Status with reason InternalError", path, name, rec.Code, rec.Body)
			}
		}
	}
}

// TestConcurrentRequests serves v2 and v3 in parallel (run with -race).
func TestConcurrentRequests(t *testing.T) {
	static := newStaticOpenAPI(t)
	h := &Handler{CRDs: testCRDs(), Static: static, Next: &nextHandler{}}
	paths := []string{"/openapi/v2", "/openapi/v3", "/openapi/v3/apis/stable.example.com/v1"}
	want := map[string][]byte{}
	for _, p := range paths {
		want[p] = get(h, "c1", p, "").Body.Bytes()
	}
	errs := make(chan string, 64)
	done := make(chan struct{})
	for i := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for j := range 6 {
				p := paths[(i+j)%len(paths)]
				if rec := get(h, "c1", p, ""); !bytes.Equal(rec.Body.Bytes(), want[p]) {
					errs <- "GET " + p + " answered another document"
				}
			}
		}()
	}
	for range 8 {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if n := static.requests.Load(); n != 2 {
		t.Errorf("the static handler was asked %d times, want 2 (v2 and the v3 index, once each)", n)
	}
}
