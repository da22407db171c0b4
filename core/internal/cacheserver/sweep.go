package cacheserver

import (
	"context"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
)

// Sweeper deletes the copies of shards that left the install (their Shard
// is gone from root): no writer of theirs deletes them any more. A shard
// must be missing from two sweeps in a row (a Shard recreated in between
// keeps its copies).
type Sweeper struct {
	Handler *Handler
	// Shards lists the names of the registered shards.
	Shards func(ctx context.Context) (map[string]bool, error)

	missing map[string]bool
}

// Run sweeps every interval until ctx ends.
func (s *Sweeper) Run(ctx context.Context, interval time.Duration) {
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if n, err := s.Sweep(ctx); err != nil {
			klog.FromContext(ctx).Info("Cannot sweep the cache server", "err", err.Error())
		} else if n > 0 {
			klog.FromContext(ctx).Info("Deleted the cache server's copies of shards that left", "objects", n)
		}
	}, interval)
}

// Sweep deletes the copies of the shards missing now and at the last
// sweep, and reports how many it deleted.
func (s *Sweeper) Sweep(ctx context.Context) (int, error) {
	registered, err := s.Shards(ctx)
	if err != nil {
		return 0, err
	}
	resp, err := s.Handler.Client.Get(ctx, s.Handler.Prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return 0, err
	}
	missing := map[string]bool{}
	var gone []string
	for _, kv := range resp.Kvs {
		// <prefix><group>/<resource>/<shard>/<cluster>/<name>
		parts := strings.SplitN(strings.TrimPrefix(string(kv.Key), s.Handler.Prefix), "/", 5)
		if len(parts) != 5 || registered[parts[2]] {
			continue
		}
		missing[parts[2]] = true
		if s.missing[parts[2]] {
			gone = append(gone, string(kv.Key))
		}
	}
	s.missing = missing
	deleted := 0
	for _, key := range gone {
		// Only what is still unchanged since the listing: a shard that came
		// back and wrote again keeps its copy.
		r, err := s.Handler.Client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "<", resp.Header.Revision+1)).
			Then(clientv3.OpDelete(key)).Commit()
		if err != nil {
			return deleted, err
		}
		if r.Succeeded && len(r.Responses) == 1 {
			deleted += int(r.Responses[0].GetResponseDeleteRange().GetDeleted())
		}
	}
	return deleted, nil
}
