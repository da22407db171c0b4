package manager

import (
	"context"
	"errors"
	"time"

	"github.com/go-logr/logr"
	"github.com/kcp-dev/logicalcluster/v3"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	"github.com/meshplane/meshplane/providers/dispatch"
)

// MapFunc turns an object of a watched kind, in logical cluster cluster,
// into the requests it causes.
type MapFunc func(cluster string, obj client.Object) []mcreconcile.Request

// Watch is a kind a wildcard controller follows besides its own.
type Watch struct {
	Object client.Object
	Map    MapFunc
	// Changes only: deletions, and objects being deleted, cause no
	// requests (a dependent the controller would make again must not be
	// made again while its whole workspace is being torn down).
	Changes bool
}

// notEngagedRetry is how soon a request for a workspace the manager has
// not engaged yet (its objects reach the shared informers first) is tried
// again.
const notEngagedRetry = 250 * time.Millisecond

// WildcardController adds controller name to the manager: one work queue
// fed by handlers on the provider's shared informers, for every workspace
// at once (package dispatch, Watch). Unlike a multicluster-runtime
// controller it is not engaged per workspace, which costs ~4 goroutines
// and an event handler per watched kind for every workspace (9 goroutines
// per workspace for the account-operator's two controllers). Requests name
// objects of forObj's kind; a request for a workspace not engaged yet
// waits until it is (while forObj's informer still holds the object),
// so r can always reach the workspace's client.
func (k *Kit) WildcardController(name string, forObj client.Object, workers int, r reconcile.TypedReconciler[mcreconcile.Request], watches ...Watch) error {
	d := k.Provider.Dispatch()
	wrapped := reconcile.TypedFunc[mcreconcile.Request](func(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
		if _, err := k.Manager.GetCluster(ctx, req.ClusterName); err != nil {
			if !errors.Is(err, multicluster.ErrClusterNotFound) {
				return reconcile.Result{}, err
			}
			if _, ok := d.Get(forObj, string(req.ClusterName), req.Name); ok {
				return reconcile.Result{RequeueAfter: notEngagedRetry}, nil
			}
			return reconcile.Result{}, nil // gone with its workspace
		}
		return r.Reconcile(ctx, req)
	})
	c, err := controller.NewTyped(name, k.Manager.GetLocalManager(), controller.TypedOptions[mcreconcile.Request]{
		Reconciler: wrapped, MaxConcurrentReconciles: max(workers, 1),
	})
	if err != nil {
		return err
	}
	self := func(cluster string, obj client.Object) []mcreconcile.Request {
		return []mcreconcile.Request{{ClusterName: multicluster.ClusterName(cluster), Request: reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)}}}
	}
	for _, w := range append([]Watch{{Object: forObj, Map: self}}, watches...) {
		if err := c.Watch(&wildcardSource{d: d, w: w, log: k.log.WithValues("controller", name)}); err != nil {
			return err
		}
	}
	return nil
}

// wildcardSource enqueues the requests of one kind's events in every
// workspace.
type wildcardSource struct {
	d   *dispatch.Dispatch
	w   Watch
	log logr.Logger
}

func (s *wildcardSource) Start(_ context.Context, q workqueue.TypedRateLimitingInterface[mcreconcile.Request]) error {
	enqueue := func(o any) {
		if t, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
			o = t.Obj
		}
		obj, ok := o.(client.Object)
		if !ok {
			return
		}
		if s.w.Changes && obj.GetDeletionTimestamp() != nil {
			return
		}
		for _, req := range s.w.Map(logicalcluster.From(obj).String(), obj) {
			q.Add(req)
		}
	}
	return s.d.Watch(s.w.Object, toolscache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, o any) { enqueue(o) },
		DeleteFunc: func(o any) {
			if !s.w.Changes {
				enqueue(o)
			}
		},
	}, func(err error) { s.log.Error(err, "following a kind in a new endpoint's workspaces") })
}
