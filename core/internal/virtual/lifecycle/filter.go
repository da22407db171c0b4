package lifecycle

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// A LogicalCluster carries its terminator labels from its creation, as in
// kcp, so the terminating virtual workspace's label selector alone would
// show clusters that are not deleted. On the wildcard it shows only those
// with a deletionTimestamp: a watcher sees the deletion as the MODIFIED
// event of a cluster it selects (kcp's deletionTimestamp filter), not as
// an ADDED one, and the removal of its terminator as DELETED.

// terminatingWildcard reports whether ctx is a wildcard request through
// the terminating virtual workspace.
func terminatingWildcard(ctx context.Context) bool {
	t, ok := From(ctx)
	return ok && t.Kind == Terminating && clusters.IsWildcard(ctx)
}

func deleted(obj runtime.Object) bool {
	m, err := meta.Accessor(obj)
	return err == nil && m.GetDeletionTimestamp() != nil
}

// FilterList drops the LogicalClusters not being deleted from a list
// through the terminating virtual workspace; other lists are unchanged.
func FilterList(ctx context.Context, list runtime.Object) (runtime.Object, error) {
	if !terminatingWildcard(ctx) {
		return list, nil
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	kept := items[:0]
	for _, o := range items {
		if deleted(o) {
			kept = append(kept, o)
		}
	}
	return list, meta.SetList(list, kept)
}

// FilterWatch drops the ADDED and MODIFIED events of LogicalClusters not
// being deleted from a watch through the terminating virtual workspace;
// other watches are unchanged.
func FilterWatch(ctx context.Context, w watch.Interface) watch.Interface {
	if !terminatingWildcard(ctx) {
		return w
	}
	return watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
		switch e.Type {
		case watch.Added, watch.Modified:
			return e, deleted(e.Object)
		}
		return e, true
	})
}
