package apiexport

import (
	"encoding/json"
	"sync"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Consumers remembers which clusters bind which export, and the
// permission claims they accepted, as the binding controller learns it.
type Consumers struct {
	mu sync.RWMutex
	// export -> consumer cluster -> binding name
	byExport map[exportKey]map[string]string
	// consumer cluster -> binding name -> export
	byConsumer map[string]map[string]exportKey
	// consumer cluster -> binding name -> applied claims
	claims         map[string]map[string][]Claim
	onChange       []func(exportCluster, exportName string)
	onClaimsChange []func(consumer string, resources []schema.GroupResource)
}

// NewConsumers returns an empty set.
func NewConsumers() *Consumers {
	return &Consumers{byExport: map[exportKey]map[string]string{}, byConsumer: map[string]map[string]exportKey{},
		claims: map[string]map[string][]Claim{}}
}

// SetClaims records the permission claims a binding of the export applies
// (the accepted claims the export makes). Listeners of OnClaimsChange hear
// of the resources whose claims changed.
func (c *Consumers) SetClaims(consumer, binding, exportCluster, exportName string, applied []apisv1alpha2.ScopedPermissionClaim) {
	claims := sharedClaims.get(exportCluster, exportName, applied)
	c.mu.Lock()
	old := c.claims[consumer][binding]
	if len(claims) == 0 {
		delete(c.claims[consumer], binding)
		if len(c.claims[consumer]) == 0 {
			delete(c.claims, consumer)
		}
	} else {
		if c.claims[consumer] == nil {
			c.claims[consumer] = map[string][]Claim{}
		}
		c.claims[consumer][binding] = claims
	}
	listeners := c.onClaimsChange
	c.mu.Unlock()
	if changed := changedResources(old, claims); len(changed) > 0 {
		for _, f := range listeners {
			f(consumer, changed)
		}
	}
}

// Accepted reports whether consumer binds the export and, for a claimed
// resource (exported false), accepted the claim on group/resource.
func (c *Consumers) Accepted(consumer, exportCluster, exportName, group, resource string, exported bool) bool {
	if exported {
		_, ok := c.Binds(consumer, exportCluster, exportName)
		return ok
	}
	_, ok := c.Claim(consumer, exportCluster, exportName, group, resource)
	return ok
}

// Claim returns the claim on group/resource that consumer's binding of
// the export applies, if any.
func (c *Consumers) Claim(consumer, exportCluster, exportName, group, resource string) (Claim, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	binding, ok := c.byExport[key(exportCluster, exportName)][consumer]
	if !ok {
		return Claim{}, false
	}
	for _, cl := range c.claims[consumer][binding] {
		if cl.Group == group && cl.Resource == resource {
			return cl, true
		}
	}
	return Claim{}, false
}

// ClaimsOn returns the claims consumer's bindings apply to group/resource.
func (c *Consumers) ClaimsOn(consumer string, gr schema.GroupResource) []Claim {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []Claim
	for _, claims := range c.claims[consumer] {
		for _, cl := range claims {
			if cl.Group == gr.Group && cl.Resource == gr.Resource {
				out = append(out, cl)
			}
		}
	}
	return out
}

// OnClaimsChange registers f to hear of the resources of a consumer whose
// applied claims changed.
func (c *Consumers) OnClaimsChange(f func(consumer string, resources []schema.GroupResource)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onClaimsChange = append(c.onClaimsChange, f)
}

// changedResources returns the resources whose claims differ between old
// and new.
func changedResources(old, new []Claim) []schema.GroupResource {
	set := map[schema.GroupResource]bool{}
	index := func(claims []Claim) map[schema.GroupResource]string {
		m := map[schema.GroupResource]string{}
		for _, cl := range claims {
			m[cl.GroupResource()] += cl.id()
		}
		return m
	}
	o, n := index(old), index(new)
	for gr, v := range o {
		if n[gr] != v {
			set[gr] = true
		}
	}
	for gr, v := range n {
		if o[gr] != v {
			set[gr] = true
		}
	}
	out := make([]schema.GroupResource, 0, len(set))
	for gr := range set {
		out = append(out, gr)
	}
	return out
}

// exportKey names an export: its cluster and name.
type exportKey struct{ cluster, name string }

func key(cluster, name string) exportKey { return exportKey{cluster, name} }

// Set records that binding in consumer binds the export (or, with an empty
// export cluster, that it binds nothing).
func (c *Consumers) Set(consumer, binding, exportCluster, exportName string) {
	c.mu.Lock()
	changed := map[exportKey]bool{}
	for k, m := range c.byExport {
		if m[consumer] == binding && k != key(exportCluster, exportName) {
			delete(m, consumer)
			changed[k] = true
		}
	}
	delete(c.byConsumer[consumer], binding)
	if len(c.byConsumer[consumer]) == 0 {
		delete(c.byConsumer, consumer)
	}
	if exportCluster != "" {
		k := key(exportCluster, exportName)
		if c.byConsumer[consumer] == nil {
			c.byConsumer[consumer] = map[string]exportKey{}
		}
		c.byConsumer[consumer][binding] = k
		if c.byExport[k] == nil {
			c.byExport[k] = map[string]string{}
		}
		if c.byExport[k][consumer] != binding {
			c.byExport[k][consumer] = binding
			changed[k] = true
		}
	}
	listeners := c.onChange
	c.mu.Unlock()
	for k := range changed {
		for _, f := range listeners {
			f(k.cluster, k.name)
		}
	}
}

// Of returns the consumer clusters of an export, with their binding names.
func (c *Consumers) Of(exportCluster, exportName string) map[string]string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := map[string]string{}
	for k, v := range c.byExport[key(exportCluster, exportName)] {
		out[k] = v
	}
	return out
}

// ExportRef names an export a consumer binds, and the binding.
type ExportRef struct {
	Cluster, Name, Binding string
}

// ExportsOf returns the exports consumer binds.
func (c *Consumers) ExportsOf(consumer string) []ExportRef {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]ExportRef, 0, len(c.byConsumer[consumer]))
	for binding, k := range c.byConsumer[consumer] {
		out = append(out, ExportRef{Cluster: k.cluster, Name: k.name, Binding: binding})
	}
	return out
}

// Binds reports whether consumer binds the export.
func (c *Consumers) Binds(consumer, exportCluster, exportName string) (string, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	b, ok := c.byExport[key(exportCluster, exportName)][consumer]
	return b, ok
}

// OnChange registers f to hear of exports whose consumers changed.
func (c *Consumers) OnChange(f func(exportCluster, exportName string)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onChange = append(c.onChange, f)
}

// claimSets shares the claims of bindings that apply the same ones (every
// Account workspace's binding of core.platform-mesh.io applies the same
// claims of the same export): one read-only slice, with its selectors and
// labels, instead of one per binding (~3 KB each).
type claimSets struct {
	mu    sync.Mutex
	byKey map[string][]Claim
}

// maxClaimSets bounds the table (tenants choose their bindings' claims);
// when full it starts over.
const maxClaimSets = 4096

var sharedClaims = &claimSets{byKey: map[string][]Claim{}}

// get returns the claims of applied for the export; callers must not
// modify them.
func (s *claimSets) get(exportCluster, exportName string, applied []apisv1alpha2.ScopedPermissionClaim) []Claim {
	if len(applied) == 0 {
		return nil
	}
	raw, err := json.Marshal(applied)
	if err != nil {
		return newClaims(exportCluster, exportName, applied)
	}
	key := exportCluster + "\x00" + exportName + "\x00" + string(raw)
	s.mu.Lock()
	defer s.mu.Unlock()
	if claims, ok := s.byKey[key]; ok {
		return claims
	}
	if len(s.byKey) >= maxClaimSets {
		clear(s.byKey)
	}
	claims := newClaims(exportCluster, exportName, applied)
	s.byKey[key] = claims
	return claims
}

func newClaims(exportCluster, exportName string, applied []apisv1alpha2.ScopedPermissionClaim) []Claim {
	claims := make([]Claim, 0, len(applied))
	for _, a := range applied {
		claims = append(claims, newClaim(exportCluster, exportName, a))
	}
	return claims
}
