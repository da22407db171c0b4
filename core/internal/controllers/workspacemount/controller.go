// Package workspacemount makes mounted Workspaces follow their mount
// objects (kcp's WorkspaceMounts): no LogicalCluster is made for them
// (the workspace controller leaves them alone); this controller keeps the
// Workspace's spec.URL and status in step with the mount object it refers
// to.
//
// Reconcile steps, in order (one file each):
//  1. reconcile_url.go: spec.URL is the mount object's status.URL;
//  2. reconcile_status.go: the WorkspaceMountReady condition and the
//     phase: Ready while the mount object is Ready, else Unavailable.
//
// Mount objects are watched (mounts.Objects: one wildcard informer per
// resource in use), so a change of one reaches its Workspaces as an event.
package workspacemount

import (
	"context"
	"time"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/internal/mounts"
	"github.com/meshplane/meshplane/core/internal/reconciler/client"
	"github.com/meshplane/meshplane/core/internal/reconciler/runner"
)

// Controller reconciles mounted Workspaces.
type Controller struct {
	workspaces client.Client[*tenancyv1alpha1.Workspace]
	informer   cache.SharedIndexInformer
	mounted    *mounts.Workspaces
	objects    *mounts.Objects
	// resync is called when the kinds a cluster serves change.
	resync chan struct{}
	runner *runner.Runner

	url    *urlReconciler
	status *statusReconciler
}

// New returns the controller. informer follows Workspaces in every
// cluster and feeds mounted; objects holds the watches on mount objects,
// whose changes the caller hands to ObjectChanged.
func New(workspaces client.Client[*tenancyv1alpha1.Workspace], informer cache.SharedIndexInformer, mounted *mounts.Workspaces,
	objects *mounts.Objects) *Controller {
	c := &Controller{workspaces: workspaces, informer: informer, mounted: mounted, objects: objects,
		resync: make(chan struct{}, 1)}
	c.runner = runner.New("workspacemount", 2, c.reconcile)
	c.url = &urlReconciler{update: func(ctx context.Context, parent string, ws *tenancyv1alpha1.Workspace) (*tenancyv1alpha1.Workspace, error) {
		return workspaces.Update(ctx, parent, "", ws.Name, ws)
	}}
	c.status = &statusReconciler{updateStatus: func(ctx context.Context, parent string, ws *tenancyv1alpha1.Workspace) error {
		_, err := workspaces.UpdateStatus(ctx, parent, "", ws.Name, ws)
		return err
	}}
	mounted.OnChange(func(mounts.Mounted) { c.Resync() })
	return c
}

// ObjectChanged queues the Workspaces that mount the object.
func (c *Controller) ObjectChanged(k mounts.ObjectKey) {
	for _, m := range c.mounted.ByObject(k) {
		c.runner.Add(runner.Key{Cluster: m.Parent, Name: m.Name})
	}
}

// Resync starts and stops mount object watches for the references in use
// and queues every mounted Workspace: after mounts come or go, and when
// the kinds clusters serve change.
func (c *Controller) Resync() {
	select {
	case c.resync <- struct{}{}:
	default:
	}
}

// Run reconciles until ctx is done.
func (c *Controller) Run(ctx context.Context) {
	_ = c.runner.EnqueueFrom(c.informer, func(obj any) []runner.Key {
		if ws, ok := runner.Unwrap(obj).(*tenancyv1alpha1.Workspace); ok && ws.Spec.Mount != nil {
			return runner.ObjectKeys(ws)
		}
		return nil
	})
	go func() {
		defer c.objects.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-c.resync:
				all := c.mounted.List("")
				c.objects.Sync(ctx, all)
				for _, m := range all {
					c.runner.Add(runner.Key{Cluster: m.Parent, Name: m.Name})
				}
			}
		}
	}()
	c.runner.Run(ctx)
}

func (c *Controller) reconcile(ctx context.Context, key runner.Key) (time.Duration, error) {
	ws, err := c.workspaces.Get(ctx, key.Cluster, "", key.Name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if ws.Spec.Mount == nil || ws.DeletionTimestamp != nil {
		return 0, nil
	}
	state, known := c.objects.State(mounts.Mounted{Parent: key.Cluster, Name: ws.Name, Ref: ws.Spec.Mount.Reference})
	if !known {
		// The watch of the mount's resource has not listed yet; its
		// first list queues the Workspace again.
		return 200 * time.Millisecond, nil
	}
	if ws, err = c.url.reconcile(ctx, key.Cluster, ws, state); err != nil {
		return 0, err
	}
	return 0, c.status.reconcile(ctx, key.Cluster, ws, state)
}
