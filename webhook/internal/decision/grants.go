package decision

import (
	"sync"
	"time"
)

// freshFor is how long after a grant change an organization's Checks ask OpenFGA
// with HIGHER_CONSISTENCY: longer than OpenFGA's cache controller TTL (1 s
// in the platform), after which its caches know the change themselves.
const freshFor = 2 * time.Second

// grantChanges counts changes of each organization's grants: the count is
// part of every cached answer's key, so a change drops the organization's
// answers. Keyed by organization, not store: with one store for the
// organizations (--organization-stores=shared) a store key would drop
// every organization's answers at every grant anywhere.
type grantChanges struct {
	mu    sync.Mutex
	gen   map[string]uint64
	since map[string]time.Time
}

func newGrantChanges() *grantChanges {
	return &grantChanges{gen: map[string]uint64{}, since: map[string]time.Time{}}
}

func (g *grantChanges) changed(org string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gen[org]++
	g.since[org] = time.Now()
}

// state returns the organization's change count and whether it changed within
// freshFor.
func (g *grantChanges) state(org string) (gen uint64, fresh bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	at, ok := g.since[org]
	if ok && time.Since(at) >= freshFor {
		delete(g.since, org)
		ok = false
	}
	return g.gen[org], ok
}
