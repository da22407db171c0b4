// Package logicalcluster drives a LogicalCluster through its phases.
//
// Reconcile steps, in order:
//  1. initializing: when no initializer is left, the cluster is Ready;
//  2. deleting: while terminators remain the cluster is Terminating; then
//     its child workspaces are deleted and awaited, everything it stores
//     is purged, and its finalizer released so the object goes too.
//
// Labels for the remaining initializers and terminators are kept in sync
// on every step, for the lifecycle virtual workspaces.
package logicalcluster

import (
	"context"
	"reflect"
	"time"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/meshplane/meshplane/core/pkg/controllers/runner"
	"github.com/meshplane/meshplane/core/pkg/tenancy"
)

// Controller reconciles LogicalClusters.
type Controller struct {
	Clients tenancy.Clients
	Index   *tenancy.Index
	// Purge deletes everything cluster stores but its LogicalCluster.
	Purge func(ctx context.Context, cluster string) error

	runner *runner.Runner
}

// Run reconciles until ctx is done.
func (c *Controller) Run(ctx context.Context) {
	c.runner = runner.New("logicalcluster", 4, c.reconcile)
	c.Index.OnChange(nil, c.runner.Add)
	c.runner.Run(ctx)
}

func (c *Controller) reconcile(ctx context.Context, cluster string) (time.Duration, error) {
	lc, err := c.Clients.LogicalClusters.Get(ctx, cluster, "", corev1alpha1.LogicalClusterName)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	want := lc.DeepCopy()
	if lc.DeletionTimestamp == nil {
		if want.Status.Phase == corev1alpha1.LogicalClusterPhaseInitializing && len(want.Status.Initializers) == 0 {
			want.Status.Phase = corev1alpha1.LogicalClusterPhaseReady
		}
		return 0, c.write(ctx, cluster, lc, want, false)
	}
	if len(want.Status.Terminators) > 0 {
		want.Status.Phase = corev1alpha1.LogicalClusterPhaseTerminating
		return 0, c.write(ctx, cluster, lc, want, true)
	}
	if want.Status.Phase != corev1alpha1.LogicalClusterPhaseDeleting {
		want.Status.Phase = corev1alpha1.LogicalClusterPhaseDeleting
		return time.Millisecond, c.write(ctx, cluster, lc, want, true)
	}
	// Children first: each goes through its own deletion.
	list, err := c.Clients.Workspaces.List(ctx, cluster, "", nil)
	if err != nil {
		return 0, err
	}
	children := list.(*tenancyv1alpha1.WorkspaceList).Items
	for _, ws := range children {
		if ws.DeletionTimestamp == nil {
			if err := c.Clients.Workspaces.Delete(ctx, cluster, "", ws.Name); err != nil && !apierrors.IsNotFound(err) {
				return 0, err
			}
		}
	}
	if len(children) > 0 {
		return time.Second, nil
	}
	if err := c.Purge(ctx, cluster); err != nil {
		return 0, err
	}
	want.Finalizers = nil
	_, err = c.Clients.LogicalClusters.Update(ctx, cluster, "", want.Name, want)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	return 0, err
}

// write stores the phase and lifecycle labels when they changed.
func (c *Controller) write(ctx context.Context, cluster string, have, want *corev1alpha1.LogicalCluster, terminating bool) error {
	if terminating {
		want.Labels = tenancy.WithLifecycleLabels(want.Labels, nil, want.Status.Terminators)
	} else {
		want.Labels = tenancy.WithLifecycleLabels(want.Labels, want.Status.Initializers, nil)
	}
	if reflect.DeepEqual(have.Labels, want.Labels) && have.Status.Phase == want.Status.Phase {
		return nil
	}
	_, err := c.Clients.LogicalClusters.UpdateStatus(ctx, cluster, "", want.Name, want)
	return err
}
