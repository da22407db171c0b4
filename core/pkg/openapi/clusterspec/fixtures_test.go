package clusterspec

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/meshplane/meshplane/core/pkg/clusters"
	"github.com/meshplane/meshplane/core/pkg/openapi/definitions"
)

// newCRD is an established namespaced CRD with a small structural schema,
// served in every version (the first is the storage version).
func newCRD(group, plural, kind string, versions ...string) *apiextensionsv1.CustomResourceDefinition {
	names := apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: strings.ToLower(kind), Kind: kind, ListKind: kind + "List"}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group, UID: types.UID("uid-" + plural + "." + group), ResourceVersion: "1"},
		Spec:       apiextensionsv1.CustomResourceDefinitionSpec{Group: group, Scope: apiextensionsv1.NamespaceScoped, Names: names},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{AcceptedNames: names,
			Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}}},
	}
	for i, v := range versions {
		crd.Spec.Versions = append(crd.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: v, Served: true, Storage: i == 0,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"size":  {Type: "integer", Description: "size of the " + kind},
						"color": {Type: "string"},
					}},
				}}}})
	}
	return crd
}

// crdList serves fixed CRDs per cluster.
type crdList map[string][]*apiextensionsv1.CustomResourceDefinition

func (l crdList) List(cluster string) []*apiextensionsv1.CustomResourceDefinition { return l[cluster] }

// staticOpenAPI serves a built-in /openapi/v2 (every definition Meshplane
// serves, no paths) and /openapi/v3 index, and counts its requests.
type staticOpenAPI struct {
	v2, v3   []byte
	requests atomic.Int32
}

func newStaticOpenAPI(t testing.TB) *staticOpenAPI {
	t.Helper()
	defs := definitions.GetOpenAPIDefinitions(func(name string) spec.Ref {
		return spec.MustCreateRef("#/definitions/" + common.EscapeJsonPointer(name))
	})
	sw := &spec.Swagger{SwaggerProps: spec.SwaggerProps{Swagger: "2.0", Info: &spec.Info{InfoProps: spec.InfoProps{Title: "Meshplane", Version: "v1"}},
		Paths: &spec.Paths{Paths: map[string]spec.PathItem{}}, Definitions: spec.Definitions{}}}
	for name, d := range defs {
		sw.Definitions[name] = d.Schema
	}
	// As in a real server, the meta kinds a CRD's document shares with the
	// static one (DeleteOptions, WatchEvent, ...) carry their GVKs.
	crdSpec, err := builder.BuildOpenAPIV2(newCRD("x.example.com", "xs", "X", "v1"), "v1", builder.Options{V2: true})
	if err != nil {
		t.Fatalf("building a CRD's v2 document: %v", err)
	}
	for name, d := range crdSpec.Definitions {
		if s, ok := sw.Definitions[name]; ok && d.Extensions["x-kubernetes-group-version-kind"] != nil {
			s.AddExtension("x-kubernetes-group-version-kind", d.Extensions["x-kubernetes-group-version-kind"])
			sw.Definitions[name] = s
		}
	}
	v2, err := json.Marshal(sw)
	if err != nil {
		t.Fatalf("marshalling the static v2 document: %v", err)
	}
	index := v3Index{Paths: map[string]v3Path{}}
	for _, gv := range []string{"api/v1", "apis/rbac.authorization.k8s.io/v1", "apis/tenancy.kcp.io/v1alpha1", "apis/apis.kcp.io/v1alpha2",
		"apis/core.kcp.io/v1alpha1", "apis/apiextensions.k8s.io/v1", "apis/authorization.k8s.io/v1", "apis/coordination.k8s.io/v1"} {
		index.Paths[gv] = v3Path{ServerRelativeURL: "/openapi/v3/" + gv + "?hash=ABC"}
	}
	v3, _ := json.Marshal(index)
	return &staticOpenAPI{v2: v2, v3: v3}
}

func (s *staticOpenAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	switch r.URL.Path {
	case "/openapi/v2":
		_, _ = w.Write(s.v2)
	case "/openapi/v3":
		_, _ = w.Write(s.v3)
	default:
		http.NotFound(w, r)
	}
}

// nextHandler records that a request was passed on.
type nextHandler struct{ paths []string }

func (n *nextHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n.paths = append(n.paths, r.URL.Path)
	w.WriteHeader(http.StatusTeapot)
}

func get(h http.Handler, cluster, path, accept string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if cluster != "" {
		req = req.WithContext(clusters.WithCluster(req.Context(), cluster))
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func benchCRDs() []*apiextensionsv1.CustomResourceDefinition {
	var out []*apiextensionsv1.CustomResourceDefinition
	for i := range 10 {
		out = append(out, newCRD(fmt.Sprintf("g%d.example.com", i%4), fmt.Sprintf("widgets%d", i), fmt.Sprintf("Widget%d", i), "v1", "v1beta1"))
	}
	return out
}

func BenchmarkOpenAPI(b *testing.B) {
	static := newStaticOpenAPI(b)
	for _, bc := range []struct{ name, path string }{
		{"v2", "/openapi/v2"},
		{"v3index", "/openapi/v3"},
		{"v3groupversion", "/openapi/v3/apis/g1.example.com/v1"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := &Handler{CRDs: crdList{"c1": benchCRDs()}, Static: static, Next: &nextHandler{}}
			b.ReportAllocs()
			for b.Loop() {
				if rec := get(h, "c1", bc.path, "application/json"); rec.Code != http.StatusOK {
					b.Fatalf("GET %s: code %d", bc.path, rec.Code)
				}
			}
		})
	}
}
