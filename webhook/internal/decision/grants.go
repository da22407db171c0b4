package decision

import (
	"sync"
	"time"
)

// freshFor is how long after a grant change a store's Checks ask OpenFGA
// with HIGHER_CONSISTENCY: longer than OpenFGA's cache controller TTL (1 s
// in the platform), after which its caches know the change themselves.
const freshFor = 2 * time.Second

// grantChanges counts changes of each store's grants: the count is part
// of every cached answer's key, so a change drops the store's answers.
type grantChanges struct {
	mu    sync.Mutex
	gen   map[string]uint64
	since map[string]time.Time
}

func newGrantChanges() *grantChanges {
	return &grantChanges{gen: map[string]uint64{}, since: map[string]time.Time{}}
}

func (g *grantChanges) changed(store string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gen[store]++
	g.since[store] = time.Now()
}

// state returns the store's change count and whether it changed within
// freshFor.
func (g *grantChanges) state(store string) (gen uint64, fresh bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	at, ok := g.since[store]
	if ok && time.Since(at) >= freshFor {
		delete(g.since, store)
		ok = false
	}
	return g.gen[store], ok
}
