package garbagecollector

import (
	"sync"
	"time"
)

// goneOwners remembers owners the watches saw deleted while they had
// dependents, so the dependents' reconciles need no live read to know
// their owner is absent (a UID is never reused). Entries expire.
type goneOwners struct {
	mu   sync.Mutex
	seen map[uid]time.Time
}

// goneFor is how long a deleted owner is remembered.
const goneFor = 10 * time.Minute

func (g *goneOwners) add(id uid) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	if g.seen == nil {
		g.seen = map[uid]time.Time{}
	}
	for k, at := range g.seen {
		if now.Sub(at) > goneFor {
			delete(g.seen, k)
		}
	}
	g.seen[id] = now
}

func (g *goneOwners) has(id uid) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	at, ok := g.seen[id]
	return ok && time.Since(at) <= goneFor
}
