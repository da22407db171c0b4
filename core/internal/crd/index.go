// Package crd serves CustomResourceDefinitions per logical cluster: a CRD
// in cluster a is served only in a, and the same group and resource with
// another schema in b is independent.
package crd

import (
	"context"
	"sync"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/core/internal/apiexport"
	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/registry/wildcard"
)

// Storage is what the index needs of the CRD registry.
type Storage = wildcard.Storage

// Index keeps every cluster's CRDs in memory, fed by a wildcard watch on
// the CRD registry.
type Index struct {
	informer cache.SharedIndexInformer

	mu        sync.RWMutex
	byCluster map[string]map[string]*apiextensionsv1.CustomResourceDefinition
	// bound holds the resources APIBindings make a cluster serve:
	// cluster -> binding -> CRD name -> CRD.
	bound    map[string]map[string]map[string]*apiextensionsv1.CustomResourceDefinition
	onChange []func(cluster string)
}

// IdentityAnnotation is apiexport.IdentityAnnotation, which owns it; the
// alias keeps this package's callers compiling.
const IdentityAnnotation = apiexport.IdentityAnnotation

// StoragePrefix is where a CRD's objects are stored: bound resources are
// stored under their export's identity, so that two exports of the same
// group and resource never share objects. A bound resource of the core
// group (services of an export) is stored as the built-in ones are,
// /<plural>, and under its identity.
func StoragePrefix(crd *apiextensionsv1.CustomResourceDefinition) string {
	p := "/" + crd.Spec.Group + "/" + crd.Spec.Names.Plural
	if crd.Spec.Group == "" {
		p = "/" + crd.Spec.Names.Plural // the core group's, as the built-in ones
	}
	if id := crd.Annotations[IdentityAnnotation]; id != "" {
		p += ":" + id
	}
	return p
}

// SetBound records the resources binding makes cluster serve.
func (i *Index) SetBound(cluster, binding string, crds []*apiextensionsv1.CustomResourceDefinition) {
	i.mu.Lock()
	if i.bound[cluster] == nil {
		i.bound[cluster] = map[string]map[string]*apiextensionsv1.CustomResourceDefinition{}
	}
	m := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, c := range crds {
		m[c.Name] = c
	}
	i.bound[cluster][binding] = m
	listeners := i.onChange
	i.mu.Unlock()
	for _, f := range listeners {
		f(cluster)
	}
}

// RemoveBound forgets the resources of a binding.
func (i *Index) RemoveBound(cluster, binding string) {
	i.mu.Lock()
	delete(i.bound[cluster], binding)
	if len(i.bound[cluster]) == 0 {
		delete(i.bound, cluster)
	}
	listeners := i.onChange
	i.mu.Unlock()
	for _, f := range listeners {
		f(cluster)
	}
}

// boundLocked returns a bound resource of cluster by CRD name.
func (i *Index) boundLocked(cluster, name string) *apiextensionsv1.CustomResourceDefinition {
	for _, m := range i.bound[cluster] {
		if c, ok := m[name]; ok {
			return c
		}
	}
	return nil
}

// GetByIdentity returns a bound resource named name (<plural>.<group>)
// bound from the export with the given identity, in any cluster.
func (i *Index) GetByIdentity(name, identity string) *apiextensionsv1.CustomResourceDefinition {
	i.mu.RLock()
	defer i.mu.RUnlock()
	for _, byBinding := range i.bound {
		for _, m := range byBinding {
			if c, ok := m[name]; ok && c.Annotations[IdentityAnnotation] == identity {
				return c
			}
		}
	}
	return nil
}

// NewIndex returns an index over the CRDs of storage.
func NewIndex(storage Storage) *Index {
	i := &Index{byCluster: map[string]map[string]*apiextensionsv1.CustomResourceDefinition{},
		bound: map[string]map[string]map[string]*apiextensionsv1.CustomResourceDefinition{}}
	i.informer = wildcard.NewInformer(storage, &apiextensionsinternal.CustomResourceDefinition{})
	wildcard.Mirror(i.informer, i.set)
	return i
}

// Run feeds the index until ctx is done.
func (i *Index) Run(ctx context.Context) { i.informer.RunWithContext(ctx) }

// HasSynced reports whether the first list is in.
func (i *Index) HasSynced() bool { return i.informer.HasSynced() }

// OnChange registers f to be called with the cluster whose CRDs changed.
func (i *Index) OnChange(f func(cluster string)) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.onChange = append(i.onChange, f)
}

// AddEventHandler lets controllers follow CRD events.
func (i *Index) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return i.informer.AddEventHandler(h)
}

func (i *Index) set(obj any, deleted bool) {
	in, ok := obj.(*apiextensionsinternal.CustomResourceDefinition)
	if !ok {
		return
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_apiextensions_CustomResourceDefinition_To_v1_CustomResourceDefinition(in, crd, nil); err != nil {
		klog.ErrorS(err, "Converting CRD", "cluster", in.Annotations[clusters.Annotation], "name", in.Name)
		return
	}
	cluster := crd.Annotations[clusters.Annotation]
	i.mu.Lock()
	m := i.byCluster[cluster]
	if deleted {
		delete(m, crd.Name)
		if len(m) == 0 {
			delete(i.byCluster, cluster)
		}
	} else {
		if m == nil {
			m = map[string]*apiextensionsv1.CustomResourceDefinition{}
			i.byCluster[cluster] = m
		}
		m[crd.Name] = crd
	}
	listeners := i.onChange
	i.mu.Unlock()
	for _, f := range listeners {
		f(cluster)
	}
}

// Get returns the CRD named name (<plural>.<group>) in cluster. For the
// wildcard cluster it returns such a CRD of any cluster.
func (i *Index) Get(cluster, name string) *apiextensionsv1.CustomResourceDefinition {
	i.mu.RLock()
	defer i.mu.RUnlock()
	if cluster != clusters.Wildcard {
		if c := i.byCluster[cluster][name]; c != nil {
			return c
		}
		return i.boundLocked(cluster, name)
	}
	for _, m := range i.byCluster {
		if crd, ok := m[name]; ok && established(crd) {
			return crd
		}
	}
	return nil
}

// List returns the CRDs of cluster (of every cluster for the wildcard,
// one per name).
func (i *Index) List(cluster string) []*apiextensionsv1.CustomResourceDefinition {
	i.mu.RLock()
	defer i.mu.RUnlock()
	var out []*apiextensionsv1.CustomResourceDefinition
	if cluster != clusters.Wildcard {
		for _, crd := range i.byCluster[cluster] {
			out = append(out, crd)
		}
		for _, m := range i.bound[cluster] {
			for _, crd := range m {
				out = append(out, crd)
			}
		}
		return out
	}
	seen := map[string]bool{}
	for _, m := range i.byCluster {
		for name, crd := range m {
			if !seen[name] && established(crd) {
				seen[name] = true
				out = append(out, crd)
			}
		}
	}
	return out
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// Established reports whether crd's Established condition is true.
func Established(crd *apiextensionsv1.CustomResourceDefinition) bool { return established(crd) }

// Own returns the CRDs created in cluster (not those bindings serve).
func (i *Index) Own(cluster string) []*apiextensionsv1.CustomResourceDefinition {
	i.mu.RLock()
	defer i.mu.RUnlock()
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(i.byCluster[cluster]))
	for _, crd := range i.byCluster[cluster] {
		out = append(out, crd)
	}
	return out
}

// BoundIn returns the resources each binding makes cluster serve.
func (i *Index) BoundIn(cluster string) map[string][]*apiextensionsv1.CustomResourceDefinition {
	i.mu.RLock()
	defer i.mu.RUnlock()
	out := make(map[string][]*apiextensionsv1.CustomResourceDefinition, len(i.bound[cluster]))
	for binding, m := range i.bound[cluster] {
		for _, crd := range m {
			out[binding] = append(out[binding], crd)
		}
	}
	return out
}
