package lazyspec

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	goruntime "runtime"
	"strings"
	"sync/atomic"
	"testing"
	"weak"

	restful "github.com/emicklei/go-restful/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/mux"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/meshplane/meshplane/core/internal/openapi/definitions"
)

// container serves GET /api/v1/namespaces/{namespace}/configmaps/{name}.
func container() *restful.Container {
	ws := new(restful.WebService).Path("/api/v1").Produces(runtime.ContentTypeJSON)
	ws.Route(ws.GET("/namespaces/{namespace}/configmaps/{name}").Operation("readCoreV1NamespacedConfigMap").
		To(func(*restful.Request, *restful.Response) {}).Writes(corev1.ConfigMap{}).Returns(http.StatusOK, "OK", corev1.ConfigMap{}))
	c := restful.NewContainer()
	c.Add(ws)
	return c
}

// counted counts the calls of a config's definitions (a v2 document's
// build makes one; v3 documents share one after Install).
func counted(n *atomic.Int32) common.GetOpenAPIDefinitions {
	return func(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
		n.Add(1)
		return definitions.Definitions(ref)
	}
}

func get(t *testing.T, h http.Handler, path string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body.String())
	}
	return rec.Body.String()
}

// TestBuiltOnFirstRequest checks that nothing is built at Install, that
// the documents describe the web services, and that they are built once.
func TestBuiltOnFirstRequest(t *testing.T) {
	namer := openapinamer.NewDefinitionNamer(scheme.Scheme)
	var v2Builds, v3Builds atomic.Int32
	v2 := genericapiserver.DefaultOpenAPIConfig(counted(&v2Builds), namer)
	var v3Definitions atomic.Int32
	v3 := genericapiserver.DefaultOpenAPIV3Config(counted(&v3Definitions), namer)
	v3Definitions.Store(0) // DefaultOpenAPIV3Config's eager call
	// builder3 reads v3's precomputed definitions; count its name lookups.
	name := v3.GetDefinitionName
	v3.GetDefinitionName = func(s string) (string, spec.Extensions) {
		v3Builds.Add(1)
		return name(s)
	}
	// A group install builds its models from v3 first (the generic
	// server's getOpenAPIModels).
	if _, err := builder3.BuildOpenAPIDefinitionsForResources(v3, "io.k8s.api.core.v1.ConfigMap"); err != nil {
		t.Fatal(err)
	}
	v3Definitions.Store(0)
	v3Builds.Store(0)
	m := mux.NewPathRecorderMux("test")
	if err := Install(container(), m, v2, v3); err != nil {
		t.Fatal(err)
	}
	if v2Builds.Load() != 0 || v3Builds.Load() != 0 {
		t.Fatalf("documents built at Install: v2 %d, v3 %d times", v2Builds.Load(), v3Builds.Load())
	}
	if v3.Definitions != nil {
		t.Error("the eagerly computed v3 definitions are still held after Install")
	}

	for range 2 {
		doc := get(t, m, "/openapi/v2")
		if !strings.Contains(doc, `"/api/v1/namespaces/{namespace}/configmaps/{name}"`) || !strings.Contains(doc, `"io.k8s.api.core.v1.ConfigMap"`) {
			t.Fatalf("v2 document lacks the configmap path or definition: %.300s", doc)
		}
	}
	if n := v2Builds.Load(); n != 1 {
		t.Errorf("v2 document built %d times, want 1", n)
	}
	if n := v3Builds.Load(); n != 0 {
		t.Errorf("v3 documents built %d times before a v3 request", n)
	}

	var index struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal([]byte(get(t, m, "/openapi/v3")), &index); err != nil {
		t.Fatal(err)
	}
	p, ok := index.Paths["api/v1"]
	if !ok {
		t.Fatalf("v3 index lacks api/v1: %v", index.Paths)
	}
	built := v3Builds.Load()
	if built == 0 {
		t.Error("v3 index served without building the document its hash comes from")
	}
	if n := v3Definitions.Load(); n != 1 {
		t.Errorf("v3 definitions computed %d times for the first v3 document, want 1", n)
	}
	doc := get(t, m, p.ServerRelativeURL)
	if !strings.Contains(doc, `"/api/v1/namespaces/{namespace}/configmaps/{name}"`) {
		t.Errorf("v3 document of api/v1 lacks the configmap path: %.300s", doc)
	}
	if !strings.Contains(doc, `"operationId":"readCoreV1CoreV1NamespacedConfigMap"`) {
		t.Errorf("v3 document of api/v1 lacks the route's operation ID: %.300s", doc)
	}
	get(t, m, p.ServerRelativeURL)
	if n := v3Builds.Load(); n != built {
		t.Errorf("v3 document built again on later requests (%d name lookups, then %d)", built, n)
	}
	if n := v3Definitions.Load(); n != 1 {
		t.Errorf("v3 definitions computed %d times, want 1", n)
	}
}

func TestGroupVersion(t *testing.T) {
	for path, want := range map[string][3]any{
		"api/v1":              {"", "v1", true},
		"apis/rbac.k8s.io/v1": {"rbac.k8s.io", "v1", true},
		"apis":                {"", "", false},
		"apis/a/b/c":          {"", "", false},
	} {
		g, v, ok := groupVersion(path)
		if got := [3]any{g, v, ok}; got != want {
			t.Errorf("groupVersion(%q) = %v, want %v", path, got, want)
		}
	}
}

func TestNarrowMetaKinds(t *testing.T) {
	gvk := func(g, v, k string) any { return map[string]any{"group": g, "version": v, "kind": k} }
	s := &spec3.OpenAPI{Components: &spec3.Components{Schemas: map[string]*spec.Schema{
		"DeleteOptions": {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{
			"x-kubernetes-group-version-kind": []any{gvk("", "v1", "DeleteOptions"), gvk("apps", "v1", "DeleteOptions"), gvk("rbac.k8s.io", "v1", "DeleteOptions")}}}},
		"Scale": {VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{
			"x-kubernetes-group-version-kind": []any{gvk("autoscaling", "v1", "Scale"), gvk("rbac.k8s.io", "v1", "Scale")}}}},
	}}}
	narrowMetaKinds(s, "rbac.k8s.io", "v1")
	if got := s.Components.Schemas["DeleteOptions"].Extensions["x-kubernetes-group-version-kind"].([]any); len(got) != 2 ||
		got[0].(map[string]any)["group"] != "" || got[1].(map[string]any)["group"] != "rbac.k8s.io" {
		t.Errorf("DeleteOptions kept %v, want core/v1 and rbac.k8s.io/v1", got)
	}
	if got := s.Components.Schemas["Scale"].Extensions["x-kubernetes-group-version-kind"].([]any); len(got) != 2 {
		t.Errorf("Scale (not registered into every group) narrowed to %v", got)
	}
}

// TestDefinitionsReleased checks that after a group install (which
// builds models from the config) and Install, nothing holds the
// definitions DefaultOpenAPIV3Config computed.
func TestDefinitionsReleased(t *testing.T) {
	v3 := genericapiserver.DefaultOpenAPIV3Config(definitions.Definitions, openapinamer.NewDefinitionNamer(scheme.Scheme))
	data := v3.Definitions["io.k8s.api.core.v1.ConfigMap"].Schema.Properties["data"].AdditionalProperties
	if data == nil {
		t.Fatal("ConfigMap.data has no additionalProperties schema")
	}
	held := weak.Make(data)
	data = nil
	if _, err := builder3.BuildOpenAPIDefinitionsForResources(v3, "io.k8s.api.core.v1.ConfigMap"); err != nil {
		t.Fatal(err)
	}
	if err := Install(container(), mux.NewPathRecorderMux("test"), nil, v3); err != nil {
		t.Fatal(err)
	}
	goruntime.GC()
	if held.Value() != nil {
		t.Error("the eagerly computed definitions are still reachable from the config after Install")
	}
	goruntime.KeepAlive(v3)
}

// TestBuildsOwnTheirExtensions: every build gets its own extension maps,
// since builder3 writes into them while documents built before are encoded
// concurrently (the server crashed with "concurrent map iteration and map
// write" in a group document's encoding).
func TestBuildsOwnTheirExtensions(t *testing.T) {
	calls := 0
	get := once(func(common.ReferenceCallback) map[string]common.OpenAPIDefinition {
		calls++
		s := spec.Schema{}
		s.Extensions = spec.Extensions{"x-kubernetes-group-version-kind": []any{}}
		return map[string]common.OpenAPIDefinition{"a": {Schema: s}}
	})
	first, second := get(nil), get(nil)
	if calls != 1 {
		t.Fatalf("definitions computed %d times, want once", calls)
	}
	first["a"].Schema.Extensions["x-written-by-a-build"] = true
	delete(first["a"].Schema.Extensions, "x-kubernetes-group-version-kind")
	if _, ok := second["a"].Schema.Extensions["x-written-by-a-build"]; ok {
		t.Fatal("a build's write reached another build's extensions")
	}
	if _, ok := second["a"].Schema.Extensions["x-kubernetes-group-version-kind"]; !ok {
		t.Fatal("a build's delete reached another build's extensions")
	}
}
