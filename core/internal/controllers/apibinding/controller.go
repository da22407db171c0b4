// Package apibinding binds APIExports into consumer workspaces.
//
// Reconcile steps (one file each):
//  1. reconcile_deletion.go: for a binding being deleted, delete the
//     objects of its resources, wait until they are gone (condition
//     BindingResourceDeleteSuccess says what remains), stop serving them
//     and release the binding's finalizer;
//  2. reconcile_binding.go: resolve the export (spec.reference.export,
//     path relative to nothing: empty means the binding's own workspace);
//     wait for its identity; turn each exported APIResourceSchema into the
//     CRD the consumer serves (stored under the export's identity); refuse
//     names that clash with the consumer's CRDs or other bindings; report
//     Bound with the bound resources.
//
// The controller then serves what the binding step returned, records the
// binding and its accepted claims for the APIExport virtual workspace,
// and writes the status.
package apibinding

import (
	"context"
	"hash/fnv"
	"sync"
	"time"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/internal/apiexport"
	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/crd"
	"github.com/meshplane/meshplane/core/internal/reconciler/client"
	"github.com/meshplane/meshplane/core/internal/reconciler/runner"
	"github.com/meshplane/meshplane/core/internal/tenancy"
)

// Controller reconciles APIBindings.
type Controller struct {
	bindings        client.Client[*apisv1alpha2.APIBinding]
	crds            *crd.Index
	consumers       *apiexport.Consumers
	bindingInformer cache.SharedIndexInformer
	exportInformer  cache.SharedIndexInformer
	// otherExports are the exports of other shards (nil on one shard).
	otherExports runner.Source

	deletion *deletionReconciler
	binding  *bindingReconciler
	// serving is held per consumer from the conflict check of a binding to
	// its resources being served, so that of two bindings of one resource
	// only one serves it (kcp locks resources in the LogicalCluster).
	serving stripedLock
}

// stripedLock is a fixed set of mutexes picked by cluster name.
type stripedLock [64]sync.Mutex

func (l *stripedLock) of(cluster string) *sync.Mutex {
	h := fnv.New32a()
	_, _ = h.Write([]byte(cluster))
	return &l[h.Sum32()%uint32(len(l))]
}

// New returns the controller. deleteAll deletes every object of a bound
// resource in a cluster, remaining tells what is left of them. The
// informers follow bindings and exports in every cluster; the caller runs
// them. resolve resolves export paths (on every shard); otherExports, when
// not nil, sends the events of other shards' exports.
func New(bindings client.Client[*apisv1alpha2.APIBinding], exports client.Reader[*apisv1alpha2.APIExport],
	schemas client.Reader[*apisv1alpha1.APIResourceSchema], index *tenancy.Index, crds *crd.Index, consumers *apiexport.Consumers,
	deleteAll func(ctx context.Context, cluster string, def *apiextensionsv1.CustomResourceDefinition) error,
	remaining func(ctx context.Context, cluster string, def *apiextensionsv1.CustomResourceDefinition) (Remaining, error),
	bindingInformer, exportInformer cache.SharedIndexInformer, resolve func(path string) (string, bool), otherExports runner.Source) *Controller {
	exportStore := exportInformer.GetStore()
	if _, ok := bindingInformer.GetIndexer().GetIndexers()[kcpcache.ClusterIndexName]; !ok {
		_ = bindingInformer.AddIndexers(cache.Indexers{kcpcache.ClusterIndexName: kcpcache.ClusterIndexFunc})
	}
	return &Controller{
		bindings: bindings, crds: crds, consumers: consumers,
		bindingInformer: bindingInformer, exportInformer: exportInformer, otherExports: otherExports,
		deletion: &deletionReconciler{
			bound:     crds.Bound,
			deleteAll: deleteAll,
			remaining: remaining,
			forget:    func(cluster, binding string) { forget(crds, consumers, cluster, binding) },
			update: func(ctx context.Context, cluster string, b *apisv1alpha2.APIBinding) error {
				_, err := bindings.Update(ctx, cluster, "", b.Name, b)
				return err
			},
			updateStatus: func(ctx context.Context, cluster string, b *apisv1alpha2.APIBinding) error {
				_, err := bindings.UpdateStatus(ctx, cluster, "", b.Name, b)
				return err
			},
		},
		binding: &bindingReconciler{
			resolve: resolve,
			path:    index.Path,
			// A local export comes from the informer whose changes wake
			// its bindings, once it has its identity; schemas from the
			// watch cache (they do not change).
			getExport: func(ctx context.Context, cluster, name string) (*apisv1alpha2.APIExport, error) {
				export, err := client.StoredOrLive(ctx, exportStore, exports, cluster, "", name)
				if err == nil && export.Status.IdentityHash == "" {
					return exports.Get(ctx, cluster, "", name)
				}
				return export, err
			},
			getSchema: func(ctx context.Context, cluster, name string) (*apisv1alpha1.APIResourceSchema, error) {
				return client.CachedOrLive(ctx, schemas, cluster, "", name)
			},
			conflicts: conflictChecker{own: crds.Own, bound: crds.BoundIn, bindings: func(cluster string) []*apisv1alpha2.APIBinding {
				objs, _ := bindingInformer.GetIndexer().ByIndex(kcpcache.ClusterIndexName, cluster)
				out := make([]*apisv1alpha2.APIBinding, 0, len(objs))
				for _, o := range objs {
					if b, ok := o.(*apisv1alpha2.APIBinding); ok {
						out = append(out, b)
					}
				}
				return out
			}},
		},
	}
}

// forget stops serving a binding's resources and drops it from the
// consumers of its export.
func forget(crds *crd.Index, consumers *apiexport.Consumers, cluster, binding string) {
	crds.RemoveBound(cluster, binding)
	consumers.SetClaims(cluster, binding, "", "", nil)
	consumers.Set(cluster, binding, "", "")
}

// Run works until ctx is done.
func (c *Controller) Run(ctx context.Context) {
	r := runner.New("apibinding", 4, c.reconcile)
	_ = r.EnqueueFrom(c.bindingInformer, runner.ObjectKeys)
	// A change of an export (identity, resources) concerns its bindings,
	// and every binding not bound yet.
	exportChanged := func(obj any) []runner.Key {
		e, ok := obj.(*apisv1alpha2.APIExport)
		if !ok {
			return nil
		}
		var keys []runner.Key
		for consumer, binding := range c.consumers.Of(e.Annotations[clusters.Annotation], e.Name) {
			keys = append(keys, runner.Key{Cluster: consumer, Name: binding})
		}
		for _, o := range c.bindingInformer.GetStore().List() {
			if b := o.(*apisv1alpha2.APIBinding); b.Status.Phase != apisv1alpha2.APIBindingPhaseBound {
				keys = append(keys, runner.ObjectKeys(b)...)
			}
		}
		return keys
	}
	_ = r.EnqueueUpdatesFrom(c.exportInformer, exportChanged)
	if c.otherExports != nil {
		// An export of another shard appears here when the replica lists
		// it: that concerns bindings waiting for it too.
		_ = r.EnqueueFrom(c.otherExports, exportChanged)
	}
	r.Run(ctx)
}

func (c *Controller) reconcile(ctx context.Context, key runner.Key) (time.Duration, error) {
	cluster, name := key.Cluster, key.Name
	// From the informer, at least as fresh as the event that woke this key
	// (a stale read ends in a conflict and another round).
	b, err := client.StoredOrLive(ctx, c.bindingInformer.GetStore(), c.bindings, cluster, "", name)
	if apierrors.IsNotFound(err) {
		forget(c.crds, c.consumers, cluster, name)
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if b.DeletionTimestamp != nil {
		if len(c.crds.Bound(cluster, name)) == 0 && len(b.Status.BoundResources) > 0 {
			// After a restart: serve the resources again, so that their
			// objects can be deleted and waited for.
			if _, crds := c.binding.reconcile(ctx, cluster, b.DeepCopy()); crds != nil {
				c.crds.SetBound(cluster, name, crds)
			}
		}
		return c.deletion.reconcile(ctx, cluster, b)
	}
	want := b.DeepCopy()
	if want.Status.Phase == "" {
		want.Status.Phase = apisv1alpha2.APIBindingPhaseBinding
	}
	mu := c.serving.of(cluster)
	mu.Lock()
	requeue, crds := c.binding.reconcile(ctx, cluster, want)
	if crds != nil {
		c.crds.SetBound(cluster, name, crds)
	}
	mu.Unlock()
	if crds != nil {
		c.consumers.SetClaims(cluster, name, want.Status.APIExportClusterName, want.Spec.Reference.Export.Name, want.Status.AppliedPermissionClaims)
		c.consumers.Set(cluster, name, want.Status.APIExportClusterName, want.Spec.Reference.Export.Name)
	}
	if !equality.Semantic.DeepEqual(b.Status, want.Status) {
		if _, err := c.bindings.UpdateStatus(ctx, cluster, "", name, want); err != nil {
			return 0, err
		}
	}
	return requeue, nil
}
