package discovery

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// crdOpt changes a test CRD.
type crdOpt func(*apiextensionsv1.CustomResourceDefinition)

// newCRD is an established CRD of group with plural, kind and versions
// (the first is the storage version), all served.
func newCRD(group, plural, kind string, versions []string, opts ...crdOpt) *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group, UID: types.UID("uid-" + plural + "." + group), ResourceVersion: "1"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: strings.ToLower(kind), Kind: kind, ListKind: kind + "List"},
		},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{
			AcceptedNames: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: strings.ToLower(kind), Kind: kind, ListKind: kind + "List"},
			Conditions:    []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}},
		},
	}
	for i, v := range versions {
		crd.Spec.Versions = append(crd.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: v, Served: true, Storage: i == 0,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
				XPreserveUnknownFields: ptrTo(true)}}})
	}
	for _, o := range opts {
		o(crd)
	}
	return crd
}

func ptrTo[T any](v T) *T { return &v }

func clusterScoped(crd *apiextensionsv1.CustomResourceDefinition) {
	crd.Spec.Scope = apiextensionsv1.ClusterScoped
}

func withStatusAndScale(crd *apiextensionsv1.CustomResourceDefinition) {
	for i := range crd.Spec.Versions {
		crd.Spec.Versions[i].Subresources = &apiextensionsv1.CustomResourceSubresources{
			Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
			Scale:  &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"},
		}
	}
}

func withShortNames(names ...string) crdOpt {
	return func(crd *apiextensionsv1.CustomResourceDefinition) {
		crd.Status.AcceptedNames.ShortNames = names
		crd.Status.AcceptedNames.Categories = []string{"all"}
	}
}

func notEstablished(crd *apiextensionsv1.CustomResourceDefinition) {
	crd.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse}}
}

func unservedVersion(name string) crdOpt {
	return func(crd *apiextensionsv1.CustomResourceDefinition) {
		for i := range crd.Spec.Versions {
			if crd.Spec.Versions[i].Name == name {
				crd.Spec.Versions[i].Served = false
			}
		}
	}
}

// fakeStatic serves a built-in /apis in the legacy and aggregated
// form, as the generic server's director does, and counts its requests.
type fakeStatic struct {
	groups     metav1.APIGroupList
	aggregated apidiscoveryv2.APIGroupDiscoveryList
	// coreV1 and core are the core group's (/api/v1, /api aggregated):
	// configmaps.
	coreV1   metav1.APIResourceList
	core     apidiscoveryv2.APIGroupDiscoveryList
	requests atomic.Int32
}

// newFakeStatic has n built-in groups with m resources each.
func newFakeStatic(n, m int) *fakeStatic {
	s := &fakeStatic{}
	s.groups.Kind, s.groups.APIVersion = "APIGroupList", "v1"
	s.aggregated.Kind, s.aggregated.APIVersion = "APIGroupDiscoveryList", "apidiscovery.k8s.io/v2"
	s.coreV1 = metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "v1",
		APIResources: []metav1.APIResource{{Name: "configmaps", SingularName: "configmap", Namespaced: true, Kind: "ConfigMap", Verbs: resourceVerbs}}}
	s.core = apidiscoveryv2.APIGroupDiscoveryList{TypeMeta: s.aggregated.TypeMeta, Items: []apidiscoveryv2.APIGroupDiscovery{{
		Versions: []apidiscoveryv2.APIVersionDiscovery{{Version: "v1", Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
			Resources: []apidiscoveryv2.APIResourceDiscovery{{Resource: "configmaps", SingularResource: "configmap", Scope: apidiscoveryv2.ScopeNamespace,
				Verbs: resourceVerbs, ResponseKind: &metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}}}}}}}}
	for i := range n {
		name := fmt.Sprintf("builtin%d.k8s.io", i)
		gv := metav1.GroupVersionForDiscovery{GroupVersion: name + "/v1", Version: "v1"}
		s.groups.Groups = append(s.groups.Groups, metav1.APIGroup{Name: name, Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv})
		v := apidiscoveryv2.APIVersionDiscovery{Version: "v1", Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
		for j := range m {
			v.Resources = append(v.Resources, apidiscoveryv2.APIResourceDiscovery{
				Resource: fmt.Sprintf("things%d", j), SingularResource: fmt.Sprintf("thing%d", j), Scope: apidiscoveryv2.ScopeNamespace,
				Verbs:        resourceVerbs,
				ResponseKind: &metav1.GroupVersionKind{Group: name, Version: "v1", Kind: fmt.Sprintf("Thing%d", j)},
			})
		}
		s.aggregated.Items = append(s.aggregated.Items, apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: name},
			Versions: []apidiscoveryv2.APIVersionDiscovery{v}})
	}
	return s
}

func (s *fakeStatic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	aggregated := strings.Contains(r.Header.Get("Accept"), aggregatedAccept)
	var obj any
	switch {
	case r.URL.Path == "/apis" && aggregated:
		obj = &s.aggregated
	case r.URL.Path == "/apis":
		obj = &s.groups
	case r.URL.Path == "/api/v1":
		obj = &s.coreV1
	case r.URL.Path == "/api" && aggregated:
		obj = &s.core
	default:
		http.NotFound(w, r)
		return
	}
	b, _ := json.Marshal(obj)
	_, _ = w.Write(b)
}

// nextHandler records that a request was passed on.
type nextHandler struct{ paths []string }

func (n *nextHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n.paths = append(n.paths, r.URL.Path)
	w.WriteHeader(http.StatusTeapot)
}

// lister serves fixed CRDs per cluster.
func lister(byCluster map[string][]*apiextensionsv1.CustomResourceDefinition) CRDLister {
	return func(_ context.Context, cluster string) []*apiextensionsv1.CustomResourceDefinition {
		return byCluster[cluster]
	}
}

// withCluster is the request's context with cluster, if any.
func withCluster(r *http.Request, cluster string) context.Context {
	if cluster == "" {
		return r.Context()
	}
	return clusters.WithCluster(r.Context(), cluster)
}

// get sends a GET in cluster.
func get(h http.Handler, cluster, path, accept string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	req = req.WithContext(withCluster(req, cluster))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// benchCRDs is a cluster with ten CRDs in four groups.
func benchCRDs() []*apiextensionsv1.CustomResourceDefinition {
	var out []*apiextensionsv1.CustomResourceDefinition
	for i := range 10 {
		out = append(out, newCRD(fmt.Sprintf("g%d.example.com", i%4), fmt.Sprintf("widgets%d", i), fmt.Sprintf("Widget%d", i),
			[]string{"v1", "v1beta1"}, withStatusAndScale))
	}
	return out
}

func benchHandler() *Handler {
	crds := benchCRDs()
	return &Handler{
		CRDs:   lister(map[string][]*apiextensionsv1.CustomResourceDefinition{"c1": crds}),
		Static: newFakeStatic(30, 10),
		Next:   &nextHandler{},
	}
}

func BenchmarkDiscovery(b *testing.B) {
	for _, bc := range []struct{ name, path, accept string }{
		{"aggregated", "/apis", AggregatedContentType},
		{"legacy", "/apis", "application/json"},
		{"group", "/apis/g1.example.com", "application/json"},
		{"groupversion", "/apis/g1.example.com/v1", "application/json"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := benchHandler()
			b.ReportAllocs()
			for b.Loop() {
				if rec := get(h, "c1", bc.path, bc.accept); rec.Code != http.StatusOK {
					b.Fatalf("GET %s: code %d", bc.path, rec.Code)
				}
			}
		})
	}
}
