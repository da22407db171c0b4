package securityoperator

import (
	"context"
	"sync"
	"time"

	"github.com/meshplane/meshplane/apis/fga"
)

// boundCache keeps each organization workspace's bound resources between
// the Store controller's resyncs (every 30 s per Store): its discovery,
// read again at each of them, was the idle platform's largest periodic
// cost in the core. A workspace is read again after an APIBinding or CRD
// of its cluster changed (changed), for settle after that (discovery
// follows a binding's status with a delay: what is read then is not
// kept), and at least every ttl (against a missed event).
type boundCache struct {
	// list discovers a workspace; an answer that is not complete is not
	// kept.
	list func(ctx context.Context, workspace string) (rs []fga.Resource, complete bool, err error)
	// pathOf maps a logical cluster to its workspace path (Stores name
	// their organization either way).
	pathOf func(cluster string) (string, bool)
	now    func() time.Time
	ttl    time.Duration
	settle time.Duration

	mu      sync.Mutex
	gen     uint64
	entries map[string]boundEntry
	// changes is when each workspace (by cluster and by path) last
	// changed, kept for settle.
	changes map[string]time.Time
}

type boundEntry struct {
	at        time.Time
	resources []fga.Resource
}

const (
	boundTTL    = 10 * time.Minute
	boundSettle = 30 * time.Second
)

func newBoundCache(list func(ctx context.Context, workspace string) ([]fga.Resource, bool, error), pathOf func(string) (string, bool)) *boundCache {
	return &boundCache{list: list, pathOf: pathOf, now: time.Now, ttl: boundTTL, settle: boundSettle}
}

// resources returns the workspace's bound resources, from the cache when
// they are recent enough; errors and partial answers are not kept.
func (c *boundCache) resources(ctx context.Context, workspace string) ([]fga.Resource, error) {
	c.mu.Lock()
	now := c.now()
	if e, ok := c.entries[workspace]; ok && now.Sub(e.at) < c.ttl {
		c.mu.Unlock()
		return e.resources, nil
	}
	gen := c.gen
	c.mu.Unlock()

	rs, complete, err := c.list(ctx, workspace)
	if err != nil || !complete {
		return rs, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// Kept only if nothing changed while listing, nor shortly before.
	if changed, ok := c.changes[workspace]; c.gen != gen || ok && now.Sub(changed) < c.settle {
		return rs, nil
	}
	if c.entries == nil {
		c.entries = map[string]boundEntry{}
	}
	// Workspaces not read for ttl (deleted organizations) are dropped.
	for k, e := range c.entries {
		if now.Sub(e.at) >= c.ttl {
			delete(c.entries, k)
		}
	}
	c.entries[workspace] = boundEntry{at: now, resources: rs}
	return rs, nil
}

// changed is called for every APIBinding and CRD event, with the object's
// logical cluster.
func (c *boundCache) changed(cluster string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	now := c.now()
	if c.changes == nil {
		c.changes = map[string]time.Time{}
	}
	for k, at := range c.changes {
		if now.Sub(at) >= c.settle {
			delete(c.changes, k)
		}
	}
	keys := []string{cluster}
	if p, ok := c.pathOf(cluster); ok {
		keys = append(keys, p)
	}
	for _, k := range keys {
		c.changes[k] = now
		delete(c.entries, k)
	}
}
