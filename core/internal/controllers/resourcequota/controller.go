// Package resourcequota keeps every ResourceQuota's status in every
// logical cluster: status.hard mirrors spec.hard, status.used counts the
// objects the quota covers (see internal/quota), inside the quota's own
// cluster. One controller for all clusters: one wildcard informer on
// ResourceQuotas (clusters without quotas cost nothing) and a feed of
// object changes from the garbage collector's wildcard watches, so a
// delete frees quota at once.
//
// Reconcile steps for a quota:
//  1. usage (reconcile_usage.go): count what spec.hard names and write
//     status.hard and status.used when they changed.
package resourcequota

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/quota"
	"github.com/meshplane/meshplane/core/internal/reconciler/runner"
)

// ClusterIndex is the informer index of quotas by logical cluster.
const ClusterIndex = "cluster"

// AddClusterIndex adds ClusterIndex to a quota informer (before it runs).
func AddClusterIndex(informer cache.SharedIndexInformer) error {
	return informer.AddIndexers(cache.Indexers{ClusterIndex: func(obj any) ([]string, error) {
		if q, ok := obj.(*corev1.ResourceQuota); ok {
			return []string{q.Annotations[clusters.Annotation]}, nil
		}
		return nil, nil
	}})
}

// QuotasOf lists the quotas of cluster from an informer with ClusterIndex.
func QuotasOf(informer cache.SharedIndexInformer, cluster string) []*corev1.ResourceQuota {
	objs, err := informer.GetIndexer().ByIndex(ClusterIndex, cluster)
	if err != nil {
		return nil
	}
	out := make([]*corev1.ResourceQuota, 0, len(objs))
	for _, o := range objs {
		if q, ok := o.(*corev1.ResourceQuota); ok {
			out = append(out, q)
		}
	}
	return out
}

// Controller is the quota controller.
type Controller struct {
	informer cache.SharedIndexInformer
	runner   *runner.Runner
	usage    usageStep
}

// resync recounts every quota now and then, as kube's controller does,
// in case a change was missed (writes that skip the watch feed).
const resync = 5 * time.Minute

// New returns the controller. informer follows ResourceQuotas in every
// cluster and has ClusterIndex; get and updateStatus read and write one
// quota; count counts objects.
func New(informer cache.SharedIndexInformer, get func(ctx context.Context, cluster, namespace, name string) (*corev1.ResourceQuota, error),
	updateStatus func(ctx context.Context, cluster string, q *corev1.ResourceQuota) error, count quota.Counter) *Controller {
	c := &Controller{informer: informer, usage: usageStep{get: get, count: count, updateStatus: updateStatus}}
	c.runner = runner.New("resourcequota", 2, func(ctx context.Context, key runner.Key) (time.Duration, error) {
		return resync, c.usage.reconcile(ctx, key.Cluster, key.Namespace, key.Name)
	})
	return c
}

// recountAfterChange is how long after an object was created or changed
// its quotas are recounted. Admission charges creates at once; the
// recount only catches writes that skip admission (the core's own
// controllers), and waiting keeps it from racing creates in flight.
const recountAfterChange = 10 * time.Second

// Changed tells the controller that an object of gr changed in cluster
// (namespace "" for cluster-scoped objects): the quotas counting it are
// recounted, at once for a delete (which frees quota), a little later
// otherwise.
func (c *Controller) Changed(cluster string, gr schema.GroupResource, namespace string, deleted bool) {
	for _, q := range QuotasOf(c.informer, cluster) {
		if !quota.Applies(q, namespace) || len(quota.Names(q, gr)) == 0 {
			continue
		}
		key := runner.Key{Cluster: cluster, Namespace: q.Namespace, Name: q.Name}
		if deleted {
			c.runner.Add(key)
		} else {
			c.runner.AddAfter(key, recountAfterChange)
		}
	}
}

// needsCount is the KeysFunc of quota events: a quota is recounted when
// its spec.hard is not yet mirrored in its status or a name it counts
// lacks usage, not on every status write (admission's charges would race a recount).
func needsCount(obj any) []runner.Key {
	q, ok := obj.(*corev1.ResourceQuota)
	if !ok {
		return nil
	}
	if !apiequality.Semantic.DeepEqual(q.Spec.Hard, q.Status.Hard) {
		return runner.ObjectKeys(q)
	}
	for name := range q.Spec.Hard {
		if _, ok := q.Status.Used[name]; !ok && quota.Tracked(name) {
			return runner.ObjectKeys(q)
		}
	}
	return nil
}

// Run works until ctx is done.
func (c *Controller) Run(ctx context.Context) {
	_ = c.runner.EnqueueFrom(c.informer, needsCount)
	go func() {
		// Every quota is counted once at start; each reconcile then
		// schedules the next resync.
		if cache.WaitForCacheSync(ctx.Done(), c.informer.HasSynced) {
			for _, obj := range c.informer.GetStore().List() {
				for _, k := range runner.ObjectKeys(obj) {
					c.runner.Add(k)
				}
			}
		}
	}()
	c.runner.Run(ctx)
}
