// Package discovery answers API discovery per logical cluster: the
// built-in groups every cluster has, plus the groups of the cluster's own
// CRDs, in the legacy and the aggregated (apidiscovery.k8s.io/v2) form.
package discovery

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"

	"github.com/meshplane/meshplane/core/pkg/clusters"
)

// CRDLister lists the CRDs a request's cluster serves.
type CRDLister func(ctx context.Context, cluster string) []*apiextensionsv1.CustomResourceDefinition

// Handler intercepts discovery requests of clusters that have CRDs and
// passes everything else (and clusters without CRDs) to Next.
type Handler struct {
	CRDs CRDLister
	// Static answers discovery of the built-in APIs (the generic server's
	// director, without authentication).
	Static http.Handler
	Next   http.Handler

	once          sync.Once
	groups        metav1.APIGroupList
	aggregated    apidiscoveryv2.APIGroupDiscoveryList
	aggregatedRaw []byte
}

const aggregatedAccept = "as=APIGroupDiscoveryList"

// AggregatedContentType is the content type of aggregated discovery.
const AggregatedContentType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimSuffix(r.URL.Path, "/")
	if r.Method != http.MethodGet || (p != "/apis" && !strings.HasPrefix(p, "/apis/")) {
		h.Next.ServeHTTP(w, r)
		return
	}
	cluster, _ := clusters.From(r.Context())
	crds := servedCRDs(h.CRDs(r.Context(), cluster))
	if len(crds) == 0 {
		h.Next.ServeHTTP(w, r)
		return
	}
	h.once.Do(h.loadStatic)
	parts := strings.Split(strings.TrimPrefix(p, "/apis"), "/")[1:]
	groups := groupsOf(crds)
	switch len(parts) {
	case 0:
		if strings.Contains(r.Header.Get("Accept"), aggregatedAccept) {
			list := h.aggregated.DeepCopy()
			for _, g := range groups {
				list.Items = append(list.Items, g.aggregated())
			}
			write(w, AggregatedContentType, list)
			return
		}
		list := h.groups.DeepCopy()
		for _, g := range groups {
			list.Groups = append(list.Groups, g.legacy())
		}
		write(w, "application/json", list)
		return
	case 1:
		for _, g := range groups {
			if g.name == parts[0] {
				ag := g.legacy()
				write(w, "application/json", &ag)
				return
			}
		}
	case 2:
		for _, g := range groups {
			if g.name != parts[0] {
				continue
			}
			for _, v := range g.versions {
				if v.name == parts[1] {
					write(w, "application/json", v.resourceList(g.name))
					return
				}
			}
		}
	}
	h.Next.ServeHTTP(w, r)
}

// loadStatic records the built-in discovery documents once.
func (h *Handler) loadStatic() {
	get := func(accept string) []byte {
		req := httptest.NewRequest(http.MethodGet, "/apis", nil)
		req.Header.Set("Accept", accept)
		rec := httptest.NewRecorder()
		h.Static.ServeHTTP(rec, req)
		return rec.Body.Bytes()
	}
	_ = json.Unmarshal(get("application/json"), &h.groups)
	_ = json.Unmarshal(get(AggregatedContentType), &h.aggregated)
	h.groups.Kind, h.groups.APIVersion = "APIGroupList", "v1"
	h.aggregated.Kind, h.aggregated.APIVersion = "APIGroupDiscoveryList", "apidiscovery.k8s.io/v2"
}

func write(w http.ResponseWriter, contentType string, obj any) {
	b, err := json.Marshal(obj)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "no-cache, private")
	_, _ = w.Write(b)
}

func servedCRDs(in []*apiextensionsv1.CustomResourceDefinition) []*apiextensionsv1.CustomResourceDefinition {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, crd := range in {
		if crd.Status.AcceptedNames.Plural == "" {
			continue
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				out = append(out, crd)
				break
			}
		}
	}
	return out
}

type group struct {
	name     string
	versions []*groupVersion // by kube version priority
}

type groupVersion struct {
	name      string
	resources []*apiextensionsv1.CustomResourceDefinition
}

func groupsOf(crds []*apiextensionsv1.CustomResourceDefinition) []*group {
	byName := map[string]*group{}
	for _, crd := range crds {
		g := byName[crd.Spec.Group]
		if g == nil {
			g = &group{name: crd.Spec.Group}
			byName[crd.Spec.Group] = g
		}
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			var gv *groupVersion
			for _, x := range g.versions {
				if x.name == v.Name {
					gv = x
				}
			}
			if gv == nil {
				gv = &groupVersion{name: v.Name}
				g.versions = append(g.versions, gv)
			}
			gv.resources = append(gv.resources, crd)
		}
	}
	var out []*group
	for _, g := range byName {
		if len(g.versions) == 0 {
			continue
		}
		sort.Slice(g.versions, func(i, j int) bool {
			return version.CompareKubeAwareVersionStrings(g.versions[i].name, g.versions[j].name) > 0
		})
		for _, v := range g.versions {
			sort.Slice(v.resources, func(i, j int) bool {
				return v.resources[i].Status.AcceptedNames.Plural < v.resources[j].Status.AcceptedNames.Plural
			})
		}
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func (g *group) legacy() metav1.APIGroup {
	ag := metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: g.name}
	for _, v := range g.versions {
		ag.Versions = append(ag.Versions, metav1.GroupVersionForDiscovery{GroupVersion: g.name + "/" + v.name, Version: v.name})
	}
	ag.PreferredVersion = ag.Versions[0]
	return ag
}

var (
	resourceVerbs    = []string{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}
	subresourceVerbs = []string{"get", "patch", "update"}
)

func (v *groupVersion) resourceList(group string) *metav1.APIResourceList {
	list := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: group + "/" + v.name}
	for _, crd := range v.resources {
		n := crd.Status.AcceptedNames
		namespaced := crd.Spec.Scope == apiextensionsv1.NamespaceScoped
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name: n.Plural, SingularName: n.Singular, Namespaced: namespaced, Kind: n.Kind,
			Verbs: resourceVerbs, ShortNames: n.ShortNames, Categories: n.Categories,
		})
		sub := subresources(crd, v.name)
		if sub.status {
			list.APIResources = append(list.APIResources, metav1.APIResource{Name: n.Plural + "/status", Namespaced: namespaced, Kind: n.Kind, Verbs: subresourceVerbs})
		}
		if sub.scale {
			list.APIResources = append(list.APIResources, metav1.APIResource{Name: n.Plural + "/scale", Namespaced: namespaced,
				Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: subresourceVerbs})
		}
	}
	return list
}

func (g *group) aggregated() apidiscoveryv2.APIGroupDiscovery {
	out := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g.name}}
	for _, v := range g.versions {
		av := apidiscoveryv2.APIVersionDiscovery{Version: v.name, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
		for _, crd := range v.resources {
			n := crd.Status.AcceptedNames
			scope := apidiscoveryv2.ScopeCluster
			if crd.Spec.Scope == apiextensionsv1.NamespaceScoped {
				scope = apidiscoveryv2.ScopeNamespace
			}
			r := apidiscoveryv2.APIResourceDiscovery{
				Resource: n.Plural, SingularResource: n.Singular, Scope: scope, Verbs: resourceVerbs,
				ShortNames: n.ShortNames, Categories: n.Categories,
				ResponseKind: &metav1.GroupVersionKind{Group: g.name, Version: v.name, Kind: n.Kind},
			}
			sub := subresources(crd, v.name)
			if sub.status {
				r.Subresources = append(r.Subresources, apidiscoveryv2.APISubresourceDiscovery{Subresource: "status",
					ResponseKind: r.ResponseKind, Verbs: subresourceVerbs})
			}
			if sub.scale {
				r.Subresources = append(r.Subresources, apidiscoveryv2.APISubresourceDiscovery{Subresource: "scale",
					ResponseKind: &metav1.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}, Verbs: subresourceVerbs})
			}
			av.Resources = append(av.Resources, r)
		}
		out.Versions = append(out.Versions, av)
	}
	return out
}

type subs struct{ status, scale bool }

func subresources(crd *apiextensionsv1.CustomResourceDefinition, version string) subs {
	for _, v := range crd.Spec.Versions {
		if v.Name == version && v.Subresources != nil {
			return subs{status: v.Subresources.Status != nil, scale: v.Subresources.Scale != nil}
		}
	}
	return subs{}
}
