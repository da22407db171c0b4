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

// entryOverhead approximates an entry's struct, key and map slot.
const entryOverhead = 160

// key names one serialized form of one version of an object.
type key struct {
	t               reflect.Type
	uid             types.UID
	resourceVersion string
	protobuf        bool // else JSON
}

// entry holds the serialized forms of an object's latest version seen:
// a newer version replaces it, so old versions do not linger.
type entry struct {
	t               reflect.Type
	resourceVersion string
	json, protobuf  []byte
}

func (e *entry) form(protobuf bool) *[]byte {
	if protobuf {
		return &e.protobuf
	}
	return &e.json
}

func (e *entry) size() int { return entryOverhead + len(e.json) + len(e.protobuf) }

// Cache holds serialized items, one entry per UID, in two generations:
// new entries go to the current one; when it is full it becomes the old
// one (dropping the previous old one) and an old entry that is read again
// moves back to the current one. Memory stays under the limit and items
// listed again and again stay cached. Safe for concurrent use.
type Cache struct {
	mu       sync.Mutex
	cur, old map[types.UID]*entry
	curBytes int
	limit    int
}

// New returns a cache holding at most about limit bytes.
func New(limit int) *Cache {
	return &Cache{cur: map[types.UID]*entry{}, limit: limit}
}

func (c *Cache) get(k key) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.cur[k.uid]
	if !ok {
		if e, ok = c.old[k.uid]; !ok {
			return nil, false
		}
		delete(c.old, k.uid)
		c.addLocked(k.uid, e)
	}
	if e.t != k.t || e.resourceVersion != k.resourceVersion {
		return nil, false
	}
	b := *e.form(k.protobuf)
	return b, b != nil
}

func (c *Cache) put(k key, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.cur[k.uid]
	if !ok {
		if e, ok = c.old[k.uid]; ok {
			delete(c.old, k.uid)
			c.addLocked(k.uid, e)
		}
	}
	if ok && e.t == k.t && e.resourceVersion == k.resourceVersion {
		if f := e.form(k.protobuf); *f == nil && entryOverhead+len(b) <= c.limit/2 {
			*f = b
			c.curBytes += len(b)
		}
		return
	}
	e = &entry{t: k.t, resourceVersion: k.resourceVersion}
	*e.form(k.protobuf) = b
	c.addLocked(k.uid, e)
}

// addLocked makes e the current entry of uid (replacing an older version).
func (c *Cache) addLocked(uid types.UID, e *entry) {
	n := e.size()
	if n > c.limit/2 {
		return
	}
	if prev, ok := c.cur[uid]; ok {
		c.curBytes -= prev.size()
		delete(c.cur, uid)
	}
	if c.curBytes+n > c.limit/2 {
		c.old, c.cur, c.curBytes = c.cur, map[types.UID]*entry{}, 0
	}
	c.cur[uid] = e
	c.curBytes += n
}

// Len is the number of cached serialized forms.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, m := range []map[types.UID]*entry{c.cur, c.old} {
		for _, e := range m {
			if e.json != nil {
				n++
			}
			if e.protobuf != nil {
				n++
			}
		}
	}
	return n
}
