// Package logicalcluster drives a LogicalCluster through its phases.
//
// Reconcile steps, in order (one file each):
//  1. reconcile_phase.go: while not deleted, an Initializing cluster
//     without initializers left becomes Ready;
//  2. reconcile_deletion.go: while terminators remain the cluster is
//     Terminating; then Deleting: its child workspaces are deleted and
//     awaited, its content deleted and awaited (finalizers honoured,
//     condition WorkspaceContentDeleted), what storage is left purged,
//     and its finalizer released so the object goes too.
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

	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/reconciler/client"
	"github.com/meshplane/meshplane/core/internal/reconciler/runner"
	"github.com/meshplane/meshplane/core/internal/tenancy"
)

// Controller reconciles LogicalClusters.
type Controller struct {
	logicalClusters client.Client[*corev1alpha1.LogicalCluster]
	index           *tenancy.Index
	phase           *phaseReconciler
	deletion        *deletionReconciler
}

// New returns the controller. deleteContent deletes a cluster's objects
// through their registries and says what is left; purge then deletes
// everything a cluster stores but its LogicalCluster.
func New(logicalClusters client.Client[*corev1alpha1.LogicalCluster], workspaces client.Client[*tenancyv1alpha1.Workspace],
	index *tenancy.Index, deleteContent func(ctx context.Context, cluster string) (Remaining, error),
	purge func(ctx context.Context, cluster string) error) *Controller {
	updateStatus := func(ctx context.Context, cluster string, lc *corev1alpha1.LogicalCluster) error {
		_, err := logicalClusters.UpdateStatus(ctx, cluster, "", lc.Name, lc)
		return err
	}
	return &Controller{
		logicalClusters: logicalClusters,
		index:           index,
		phase:           &phaseReconciler{updateStatus: updateStatus},
		deletion: &deletionReconciler{
			updateStatus: updateStatus,
			listWorkspaces: func(ctx context.Context, cluster string) ([]tenancyv1alpha1.Workspace, error) {
				list, err := workspaces.List(ctx, cluster, "", nil)
				if err != nil {
					return nil, err
				}
				return list.(*tenancyv1alpha1.WorkspaceList).Items, nil
			},
			deleteWorkspace: func(ctx context.Context, cluster, name string) error {
				return workspaces.Delete(ctx, cluster, "", name)
			},
			deleteContent: deleteContent,
			purge:         purge,
			update: func(ctx context.Context, cluster string, lc *corev1alpha1.LogicalCluster) error {
				_, err := logicalClusters.Update(ctx, cluster, "", lc.Name, lc)
				return err
			},
		},
	}
}

// Run reconciles until ctx is done.
func (c *Controller) Run(ctx context.Context) {
	r := runner.New("logicalcluster", 4, c.reconcile)
	_ = r.EnqueueFrom(c.index.Informer(), clusterKeys(nil))
	r.Run(ctx)
}

func (c *Controller) reconcile(ctx context.Context, key runner.Key) (time.Duration, error) {
	// From the index's informer, at least as fresh as the event that woke
	// this key (a stale read ends in a conflict and another round); the
	// steps copy before changing it.
	lc, err := client.StoredOrLive(ctx, c.index.Informer().GetStore(), c.logicalClusters, key.Cluster, "", corev1alpha1.LogicalClusterName)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if lc.DeletionTimestamp == nil {
		return c.phase.reconcile(ctx, key.Cluster, lc)
	}
	return c.deletion.reconcile(ctx, key.Cluster, lc)
}

// writeStatus stores want's phase and lifecycle labels when they differ
// from have's.
func writeStatus(ctx context.Context, updateStatus func(context.Context, string, *corev1alpha1.LogicalCluster) error,
	cluster string, have, want *corev1alpha1.LogicalCluster, terminating bool) error {
	if terminating {
		want.Labels = tenancy.WithLifecycleLabels(want.Labels, nil, want.Status.Terminators)
	} else {
		want.Labels = tenancy.WithLifecycleLabels(want.Labels, want.Status.Initializers, want.Status.Terminators)
	}
	if reflect.DeepEqual(have.Labels, want.Labels) && have.Status.Phase == want.Status.Phase {
		return nil
	}
	return updateStatus(ctx, cluster, want)
}

// clusterKeys maps a LogicalCluster that keep accepts (nil accepts all)
// to the key of its cluster.
func clusterKeys(keep func(*corev1alpha1.LogicalCluster) bool) runner.KeysFunc {
	return func(obj any) []runner.Key {
		if lc, ok := obj.(*corev1alpha1.LogicalCluster); ok && (keep == nil || keep(lc)) {
			return []runner.Key{runner.ClusterKey(lc.Annotations[clusters.Annotation])}
		}
		return nil
	}
}
