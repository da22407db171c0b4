package apiexport

import "sync"

// Consumers remembers which clusters bind which export, as the binding
// controller learns it.
type Consumers struct {
	mu sync.RWMutex
	// export -> consumer cluster -> binding name
	byExport map[exportKey]map[string]string
	// consumer cluster -> binding name -> accepted claims (<group>/<resource>)
	claims   map[string]map[string]map[string]bool
	onChange []func(exportCluster, exportName string)
}

// NewConsumers returns an empty set.
func NewConsumers() *Consumers {
	return &Consumers{byExport: map[exportKey]map[string]string{}, claims: map[string]map[string]map[string]bool{}}
}

// SetClaims records the permission claims (<group>/<resource>) a binding
// accepted.
func (c *Consumers) SetClaims(consumer, binding string, accepted []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(accepted) == 0 {
		delete(c.claims[consumer], binding)
		return
	}
	if c.claims[consumer] == nil {
		c.claims[consumer] = map[string]map[string]bool{}
	}
	m := map[string]bool{}
	for _, a := range accepted {
		m[a] = true
	}
	c.claims[consumer][binding] = m
}

// Accepted reports whether consumer binds the export and, for a claimed
// resource (exported false), accepted the claim on group/resource.
func (c *Consumers) Accepted(consumer, exportCluster, exportName, group, resource string, exported bool) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	binding, ok := c.byExport[key(exportCluster, exportName)][consumer]
	if !ok {
		return false
	}
	return exported || c.claims[consumer][binding][group+"/"+resource]
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
	if exportCluster != "" {
		k := key(exportCluster, exportName)
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
