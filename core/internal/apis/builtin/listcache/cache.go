// Package listcache encodes JSON and protobuf lists of built-in kinds with
// each item's serialized form cached, as kube's cachingObject does for watch events:
// a LIST of 2,000 unchanged configmaps then copies 2,000 cached byte
// slices instead of encoding every object again.
//
// An item's bytes are keyed by its Go type, UID and resourceVersion: every
// stored change of an object moves its resourceVersion, so a key never
// names two different contents. Items without a UID or a resourceVersion,
// or with a kind of their own, are encoded every time.
package listcache

import (
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// DefaultLimit bounds the bytes a Cache holds (item bytes plus a fixed
// overhead per entry).
const DefaultLimit = 32 << 20

// entryOverhead approximates an entry's key, slice header and map slot.
const entryOverhead = 160

type key struct {
	t               reflect.Type
	uid             types.UID
	resourceVersion string
	protobuf        bool // else JSON
}

// Cache holds serialized items in two generations: new entries go to the
// current one; when it is full it becomes the old one (dropping the
// previous old one) and an old entry that is read again moves back to the
// current one. Memory stays under the limit and items listed again and
// again stay cached. Safe for concurrent use.
type Cache struct {
	mu       sync.Mutex
	cur, old map[key][]byte
	curBytes int
	limit    int
}

// New returns a cache holding at most about limit bytes.
func New(limit int) *Cache {
	return &Cache{cur: map[key][]byte{}, limit: limit}
}

func (c *Cache) get(k key) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.cur[k]; ok {
		return b, true
	}
	b, ok := c.old[k]
	if ok {
		delete(c.old, k)
		c.addLocked(k, b)
	}
	return b, ok
}

func (c *Cache) put(k key, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.cur[k]; !ok {
		c.addLocked(k, b)
	}
}

func (c *Cache) addLocked(k key, b []byte) {
	n := len(b) + entryOverhead
	if n > c.limit/2 {
		return
	}
	if c.curBytes+n > c.limit/2 {
		c.old, c.cur, c.curBytes = c.cur, map[key][]byte{}, 0
	}
	c.cur[k] = b
	c.curBytes += n
}

// Len is the number of cached items.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cur) + len(c.old)
}
