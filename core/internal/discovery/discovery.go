// Package discovery answers API discovery per logical cluster: the
// built-in groups every cluster has, plus the groups of the cluster's own
// CRDs, in the legacy and the aggregated (apidiscovery.k8s.io/v2) form.
package discovery

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/utils/lru"

	builtinapi "github.com/meshplane/meshplane/core/internal/apis/builtin"
	"github.com/meshplane/meshplane/core/internal/clusters"
)

// CRDLister lists the CRDs a request's cluster serves.
type CRDLister func(ctx context.Context, cluster string) []*apiextensionsv1.CustomResourceDefinition

// Handler intercepts discovery requests of clusters that have CRDs and
// passes everything else (and clusters without CRDs) to Next.
//
// The built-in documents are read from Static once, on the first request
// that needs them. The documents of a set of CRDs are built once and
// cached, keyed by the CRDs' UIDs and resourceVersions, so they are built
// again only when a CRD of the set changes; clusters serving the same
// CRDs (bound resources) share them.
type Handler struct {
	CRDs CRDLister
	// Static answers discovery of the built-in APIs (the generic server's
	// director, without authentication).
	Static http.Handler
	Next   http.Handler

	once      sync.Once
	static    staticDiscovery
	staticErr error
	cache     *lru.Cache // setKey -> *documents
}

// cacheSize bounds the cached document sets (one per distinct CRD set).
const cacheSize = 128

const aggregatedAccept = "as=APIGroupDiscoveryList"

// AggregatedContentType is the content type of aggregated discovery.
const AggregatedContentType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimSuffix(r.URL.Path, "/")
	aggregated := strings.Contains(r.Header.Get("Accept"), aggregatedAccept)
	// The core group's documents change only with bound resources of it.
	core := p == "/api/v1" || (p == "/api" && aggregated)
	if r.Method != http.MethodGet || (!core && p != "/apis" && !strings.HasPrefix(p, "/apis/")) {
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
	if h.staticErr != nil {
		fail(w, r, apierrors.NewInternalError(h.staticErr))
		return
	}
	docs, err := h.documentsOf(crds)
	if err != nil {
		fail(w, r, apierrors.NewInternalError(err))
		return
	}
	if core {
		b := docs.coreV1
		if p == "/api" {
			b = docs.coreAggregated
		}
		if b == nil {
			h.Next.ServeHTTP(w, r)
			return
		}
		ct := "application/json"
		if p == "/api" {
			ct = AggregatedContentType
		}
		write(w, ct, b)
		return
	}
	parts := strings.Split(strings.TrimPrefix(p, "/apis"), "/")[1:]
	switch len(parts) {
	case 0:
		if aggregated {
			write(w, AggregatedContentType, docs.aggregated)
			return
		}
		write(w, "application/json", docs.groupList)
		return
	case 1:
		if b, ok := docs.groups[parts[0]]; ok {
			write(w, "application/json", b)
			return
		}
	case 2:
		if b, ok := docs.versions[parts[0]+"/"+parts[1]]; ok {
			write(w, "application/json", b)
			return
		}
	}
	h.Next.ServeHTTP(w, r)
}

// staticDiscovery holds the built-in discovery documents.
type staticDiscovery struct {
	groups     metav1.APIGroupList
	aggregated apidiscoveryv2.APIGroupDiscoveryList
	// coreV1 and core are the core group's: /api/v1 and /api aggregated.
	coreV1 metav1.APIResourceList
	core   apidiscoveryv2.APIGroupDiscoveryList
}

// loadStatic reads the built-in discovery documents from Static.
func (h *Handler) loadStatic() {
	h.cache = lru.New(cacheSize)
	for _, s := range []struct {
		path, accept string
		obj          any
	}{
		{"/apis", "application/json", &h.static.groups},
		{"/apis", AggregatedContentType, &h.static.aggregated},
		{"/api/v1", "application/json", &h.static.coreV1},
		{"/api", AggregatedContentType, &h.static.core},
	} {
		if err := scrape(h.Static, s.path, s.accept, s.obj); err != nil {
			h.staticErr = err
			return
		}
	}
	h.static.groups.Kind, h.static.groups.APIVersion = "APIGroupList", "v1"
	h.static.aggregated.Kind, h.static.aggregated.APIVersion = "APIGroupDiscoveryList", "apidiscovery.k8s.io/v2"
}

// scrape decodes Static's answer to GET path with accept into obj.
func scrape(static http.Handler, path, accept string, obj any) error {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Accept", accept)
	rec := httptest.NewRecorder()
	static.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return fmt.Errorf("reading built-in discovery of %s (%s): status %d: %s", path, accept, rec.Code, rec.Body.String())
	}
	if err := json.Unmarshal(rec.Body.Bytes(), obj); err != nil {
		return fmt.Errorf("decoding built-in discovery of %s (%s): %w", path, accept, err)
	}
	return nil
}

// documents are the encoded discovery documents of the built-in APIs
// plus one set of CRDs.
type documents struct {
	groupList  []byte            // /apis
	aggregated []byte            // /apis, aggregated
	groups     map[string][]byte // /apis/<group>
	versions   map[string][]byte // /apis/<group>/<version>
	// coreV1 (/api/v1) and coreAggregated (/api, aggregated) are set when
	// bound resources join the core group's built-in ones.
	coreV1, coreAggregated []byte
}

// documentsOf returns the documents of crds, from the cache when they
// have not changed.
func (h *Handler) documentsOf(crds []*apiextensionsv1.CustomResourceDefinition) (*documents, error) {
	key := setKey(crds)
	if key != "" {
		if d, ok := h.cache.Get(key); ok {
			return d.(*documents), nil
		}
	}
	d, err := h.build(crds)
	if err != nil {
		return nil, err
	}
	if key != "" {
		h.cache.Add(key, d)
	}
	return d, nil
}

func (h *Handler) build(crds []*apiextensionsv1.CustomResourceDefinition) (*documents, error) {
	var core, others []*apiextensionsv1.CustomResourceDefinition
	for _, crd := range crds {
		if crd.Spec.Group == "" {
			core = append(core, crd)
		} else {
			others = append(others, crd)
		}
	}
	groups := groupsOf(others)
	d := &documents{groups: map[string][]byte{}, versions: map[string][]byte{}}
	if err := h.buildCore(d, core); err != nil {
		return nil, err
	}
	list := h.static.groups.DeepCopy()
	agg := h.static.aggregated.DeepCopy()
	var err error
	for _, g := range groups {
		list.Groups = append(list.Groups, g.legacy())
		agg.Items = append(agg.Items, g.aggregated())
		ag := g.legacy()
		if d.groups[g.name], err = json.Marshal(&ag); err != nil {
			return nil, fmt.Errorf("encoding discovery of group %s: %w", g.name, err)
		}
		for _, v := range g.versions {
			if d.versions[g.name+"/"+v.name], err = json.Marshal(v.resourceList(g.name)); err != nil {
				return nil, fmt.Errorf("encoding discovery of %s/%s: %w", g.name, v.name, err)
			}
		}
	}
	if d.groupList, err = json.Marshal(list); err != nil {
		return nil, fmt.Errorf("encoding the group list: %w", err)
	}
	if d.aggregated, err = json.Marshal(agg); err != nil {
		return nil, fmt.Errorf("encoding aggregated discovery: %w", err)
	}
	return d, nil
}

// buildCore adds the core group's bound resources (v1 only, the core
// group's one version) to its built-in documents.
func (h *Handler) buildCore(d *documents, crds []*apiextensionsv1.CustomResourceDefinition) error {
	var v1 *groupVersion
	for _, g := range groupsOf(crds) {
		for _, v := range g.versions {
			if v.name == "v1" {
				v1 = v
			}
		}
	}
	if v1 == nil {
		return nil
	}
	list := h.static.coreV1.DeepCopy()
	list.Kind, list.APIVersion = "APIResourceList", "v1"
	list.APIResources = append(list.APIResources, v1.resourceList("").APIResources...)
	agg := h.static.core.DeepCopy()
	agg.Kind, agg.APIVersion = "APIGroupDiscoveryList", "apidiscovery.k8s.io/v2"
	bound := (&group{versions: []*groupVersion{v1}}).aggregated().Versions[0].Resources
	for i := range agg.Items {
		for j := range agg.Items[i].Versions {
			if agg.Items[i].Name == "" && agg.Items[i].Versions[j].Version == "v1" {
				agg.Items[i].Versions[j].Resources = append(agg.Items[i].Versions[j].Resources, bound...)
			}
		}
	}
	var err error
	if d.coreV1, err = json.Marshal(list); err != nil {
		return fmt.Errorf("encoding discovery of v1: %w", err)
	}
	if d.coreAggregated, err = json.Marshal(agg); err != nil {
		return fmt.Errorf("encoding aggregated discovery of the core group: %w", err)
	}
	return nil
}

// setKey identifies a set of CRDs by their UIDs and resourceVersions
// (every change of a stored CRD changes its resourceVersion). It is empty,
// and the set not cached, when a CRD has neither.
func setKey(crds []*apiextensionsv1.CustomResourceDefinition) string {
	ids := make([]string, 0, len(crds))
	for _, crd := range crds {
		if crd.UID == "" || crd.ResourceVersion == "" {
			return ""
		}
		ids = append(ids, string(crd.UID)+"/"+crd.ResourceVersion)
	}
	sort.Strings(ids)
	sum := sha256.Sum256([]byte(strings.Join(ids, ";")))
	return string(sum[:])
}

func write(w http.ResponseWriter, contentType string, b []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "no-cache, private")
	_, _ = w.Write(b)
}

// fail answers with err as a Status, as kube-apiserver does.
func fail(w http.ResponseWriter, r *http.Request, err error) {
	responsewriters.ErrorNegotiated(err, builtinapi.Codecs, schema.GroupVersion{}, w, r)
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
