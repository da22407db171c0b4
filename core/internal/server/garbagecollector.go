package server

import (
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"

	builtinapi "github.com/meshplane/meshplane/core/internal/apis/builtin"
	"github.com/meshplane/meshplane/core/internal/controllers/garbagecollector"
	"github.com/meshplane/meshplane/core/internal/crd"
	"github.com/meshplane/meshplane/core/internal/registry/builtin"
	"github.com/meshplane/meshplane/core/internal/registry/wildcard"
)

// installGarbageCollector wires the collector to every built-in registry
// and to the custom resources the CRD index knows, as they come and go.
// Each logical cluster holds the custom and bound types it serves: a
// change of a cluster's types re-reads that cluster only, and a type is
// watched while some cluster serves it (registered before the index
// runs, so that no cluster is missed).
func (p *parts) installGarbageCollector() controller {
	kinds, sources := builtinGCKinds(p.storage)
	gc := garbagecollector.New(func(holder string) map[string]garbagecollector.MakeSource {
		if holder == garbagecollector.Builtin {
			out := make(map[string]garbagecollector.MakeSource, len(sources))
			for _, s := range sources {
				out[s.ID] = func() (garbagecollector.Source, error) { return s, nil }
			}
			return out
		}
		return p.customGCSources(holder)
	}, func(cluster string, gk schema.GroupKind) (garbagecollector.Kind, bool) {
		if k, ok := kinds[gk]; ok {
			return k, true
		}
		return p.customKind(cluster, gk)
	})
	gc.InvalidOwner = p.gcInvalidOwnerEvents()
	p.crdIndex.OnChange(gc.Refresh)
	if p.quota != nil && p.quota.controller != nil {
		gc.Changes = p.quota.controller.Changed
	}
	return gc
}

// customGCSources lists the custom and bound types cluster serves, one
// per storage prefix; the registry is built only for a prefix no cluster
// needed yet.
func (p *parts) customGCSources(cluster string) map[string]garbagecollector.MakeSource {
	out := map[string]garbagecollector.MakeSource{}
	for _, c := range p.crdIndex.List(cluster) {
		if !crd.Established(c) {
			continue // not served yet (bound resources are at once)
		}
		prefix := crd.StoragePrefix(c)
		if _, ok := out[prefix]; ok {
			continue
		}
		out[prefix] = func() (garbagecollector.Source, error) {
			reg, err := p.crdHandler.Registry(c)
			if err != nil {
				return garbagecollector.Source{}, err
			}
			return garbagecollector.Source{ID: prefix, Storage: reg, KindPerObject: true,
				GroupKind: schema.GroupKind{Group: c.Spec.Group, Kind: c.Spec.Names.Kind},
				Resource:  schema.GroupResource{Group: c.Spec.Group, Resource: c.Spec.Names.Plural}}, nil
		}
	}
	return out
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
		return garbagecollector.Kind{Resource: reg, Namespaced: c.Spec.Scope == apiextensionsv1.NamespaceScoped,
			Source: crd.StoragePrefix(c)}, true
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
			gr := gv.WithResource(path).GroupResource()
			id := "builtin:" + gr.String()
			if _, ok := kinds[gk]; !ok {
				kinds[gk] = garbagecollector.Kind{Resource: res, Namespaced: scoper.NamespaceScoped(), Source: id}
			}
			if !seen[gr] {
				seen[gr] = true
				sources = append(sources, garbagecollector.Source{ID: id, GroupKind: gk, Resource: gr, Storage: watched})
			}
		}
	}
	return kinds, sources
}
