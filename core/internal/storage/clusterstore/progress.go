package clusterstore

import (
	"context"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apiserver/pkg/storage"
)

// progressNudger keeps the watch caches' progress requests answerable on a
// quiet server.
//
// etcd answers a progress request on a watch stream only once every watcher
// on it has reached its start revision. A watch cache that starts (or
// restarts its watch) after the last write watches from a revision that does
// not exist yet, and until something is written every other cache on the
// stream waits in vain: consistent lists fall back to etcd after 3 s and
// client-go's watch-lists (its default) fail with "Too large resource
// version". Kubernetes never notices because its leases write every few
// seconds; an idle Meshplane writes nothing. So when caches ask for
// progress and etcd's revision has not moved for nudgeAfter, the nudger
// writes one key outside the registry, which makes that revision exist.
// Under writes it never writes: the revision moves by itself.
type progressNudger struct {
	kv  clientv3.KV
	key string

	mu      sync.Mutex
	checked time.Time // when the revision was last read
	rev     int64     // the revision read then
	nudges  int       // writes made, for tests
}

// nudgeAfter is how long progress requests wait for etcd's revision to move
// before the nudger writes. The caches ask every 100 ms while a request
// waits, and give up after 3 s.
const nudgeAfter = 200 * time.Millisecond

func newProgressNudger(kv clientv3.KV, key string) *progressNudger {
	return &progressNudger{kv: kv, key: key}
}

// requested is called before each progress request of a watch cache.
func (n *progressNudger) requested(ctx context.Context) {
	n.mu.Lock()
	defer n.mu.Unlock()
	now := time.Now()
	since := now.Sub(n.checked)
	if since < nudgeAfter {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	resp, err := n.kv.Get(ctx, n.key, clientv3.WithCountOnly())
	if err != nil {
		return
	}
	// Unchanged since a read one or two request intervals ago: nothing has
	// been written while progress was awaited.
	quiet := resp.Header.Revision == n.rev && since < 3*nudgeAfter
	n.checked, n.rev = now, resp.Header.Revision
	if !quiet {
		return
	}
	if put, err := n.kv.Put(ctx, n.key, ""); err == nil {
		n.rev = put.Header.Revision
		n.nudges++
	}
}

// nudgingStorage is the storage a watch cache reads etcd through: its
// progress requests pass the nudger first.
type nudgingStorage struct {
	storage.Interface
	nudger *progressNudger
}

func (s nudgingStorage) RequestWatchProgress(ctx context.Context) error {
	s.nudger.requested(ctx)
	return s.Interface.RequestWatchProgress(ctx)
}
