package server

import (
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/klog/v2"

	builtinapi "github.com/meshplane/meshplane/core/internal/apis/builtin"
	"github.com/meshplane/meshplane/core/internal/controllers/garbagecollector"
	"github.com/meshplane/meshplane/core/internal/registry/builtin"
	"github.com/meshplane/meshplane/core/internal/registry/wildcard"
)

// installGarbageCollector wires the collector to every built-in registry
// and to the custom resources the CRD index knows, as they come and go.
func (p *parts) installGarbageCollector() controller {
	kinds, sources := builtinGCKinds(p.storage)
	gc := garbagecollector.New(func() []garbagecollector.Source {
		out := slices.Clone(sources)
		for prefix, c := range p.crdIndex.ByStoragePrefix() {
			reg, err := p.crdHandler.Registry(c)
			if err != nil {
				klog.V(2).InfoS("Not collecting custom resources yet", "crd", c.Name, "err", err)
				continue
			}
			out = append(out, garbagecollector.Source{ID: prefix, Storage: reg,
				Resource: schema.GroupResource{Group: c.Spec.Group, Resource: c.Spec.Names.Plural}})
		}
		return out
	}, func(cluster string, gk schema.GroupKind) (garbagecollector.Kind, bool) {
		if k, ok := kinds[gk]; ok {
			return k, true
		}
		return p.customKind(cluster, gk)
	})
	p.crdIndex.OnChange(func(string) { gc.Refresh() })
	if p.quota != nil && p.quota.controller != nil {
		gc.Changes = p.quota.controller.Changed
	}
	return gc
}

// customKind resolves a custom or bound kind of cluster.
func (p *parts) customKind(cluster string, gk schema.GroupKind) (garbagecollector.Kind, bool) {
	for _, c := range p.crdIndex.List(cluster) {
		if c.Spec.Group != gk.Group || (c.Status.AcceptedNames.Kind != gk.Kind && c.Spec.Names.Kind != gk.Kind) {
			continue
		}
		reg, err := p.crdHandler.Registry(c)
		if err != nil {
			return garbagecollector.Kind{}, false
		}
		return garbagecollector.Kind{Resource: reg, Namespaced: c.Spec.Scope == apiextensionsv1.NamespaceScoped}, true
	}
	return garbagecollector.Kind{}, false
}

// builtinGCKinds lists the built-in kinds and one watch source per
// built-in resource (a resource served in several versions once).
func builtinGCKinds(storage builtin.Storage) (map[schema.GroupKind]garbagecollector.Kind, []garbagecollector.Source) {
	kinds := map[schema.GroupKind]garbagecollector.Kind{}
	var sources []garbagecollector.Source
	seen := map[schema.GroupResource]bool{}
	for gv, byPath := range storage {
		for path, st := range byPath {
			if strings.Contains(path, "/") {
				continue
			}
			res, ok := st.(garbagecollector.Resource)
			watched, ok2 := st.(wildcard.Storage)
			scoper, ok3 := st.(rest.Scoper)
			if !ok || !ok2 || !ok3 {
				continue // reviews and other verbs-only resources
			}
			gvks, _, err := builtinapi.Scheme.ObjectKinds(st.New())
			if err != nil || len(gvks) == 0 {
				continue
			}
			gk := schema.GroupKind{Group: gv.Group, Kind: gvks[0].Kind}
			if _, ok := kinds[gk]; !ok {
				kinds[gk] = garbagecollector.Kind{Resource: res, Namespaced: scoper.NamespaceScoped()}
			}
			gr := gv.WithResource(path).GroupResource()
			if !seen[gr] {
				seen[gr] = true
				sources = append(sources, garbagecollector.Source{ID: "builtin:" + gr.String(), GroupKind: gk, Resource: gr, Storage: watched})
			}
		}
	}
	return kinds, sources
}
