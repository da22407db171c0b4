package logicalcluster

import (
	"context"
	"slices"
	"time"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	conditionsv1alpha1 "github.com/kcp-dev/sdk/apis/third_party/conditions/apis/conditions/v1alpha1"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
)

// deletionReconciler takes a deleted cluster through Terminating (while
// terminators remain) and Deleting: children first, then its content is
// deleted as kcp does (through the registries: finalizers are honoured,
// namespaces are emptied by the namespace controller, APIBindings go last)
// and awaited under the WorkspaceContentDeleted condition; then a purge of
// whatever storage is left, then its own finalizer (others' stay until
// their owners release them).
type deletionReconciler struct {
	updateStatus    func(ctx context.Context, cluster string, lc *corev1alpha1.LogicalCluster) error
	listWorkspaces  func(ctx context.Context, cluster string) ([]tenancyv1alpha1.Workspace, error)
	deleteWorkspace func(ctx context.Context, cluster, name string) error
	// deleteContent deletes what the cluster holds and says what is left.
	deleteContent func(ctx context.Context, cluster string) (Remaining, error)
	purge         func(ctx context.Context, cluster string) error
	update        func(ctx context.Context, cluster string, lc *corev1alpha1.LogicalCluster) error
}

func (r *deletionReconciler) reconcile(ctx context.Context, cluster string, lc *corev1alpha1.LogicalCluster) (time.Duration, error) {
	logger := klog.FromContext(ctx)
	want := lc.DeepCopy()
	if len(want.Status.Terminators) > 0 {
		want.Status.Phase = corev1alpha1.LogicalClusterPhaseTerminating
		return 0, writeStatus(ctx, r.updateStatus, cluster, lc, want, true)
	}
	if want.Status.Phase != corev1alpha1.LogicalClusterPhaseDeleting {
		want.Status.Phase = corev1alpha1.LogicalClusterPhaseDeleting
		return time.Millisecond, writeStatus(ctx, r.updateStatus, cluster, lc, want, true)
	}
	// Children first: each goes through its own deletion.
	children, err := r.listWorkspaces(ctx, cluster)
	if err != nil {
		return 0, err
	}
	for _, ws := range children {
		if ws.DeletionTimestamp == nil {
			logger.V(2).Info("Deleting child workspace", "workspace", ws.Name)
			if err := r.deleteWorkspace(ctx, cluster, ws.Name); err != nil && !apierrors.IsNotFound(err) {
				return 0, err
			}
		}
	}
	if len(children) > 0 {
		return time.Second, nil
	}
	left, err := r.deleteContent(ctx, cluster)
	if err != nil {
		return 0, err
	}
	if !left.Empty() {
		conditions.MarkFalse(want, tenancyv1alpha1.WorkspaceContentDeleted, "SomeResourcesRemain",
			conditionsv1alpha1.ConditionSeverityInfo, "%s", left.Message())
	} else {
		conditions.MarkTrue(want, tenancyv1alpha1.WorkspaceContentDeleted)
	}
	if !equality.Semantic.DeepEqual(lc.Status.Conditions, want.Status.Conditions) {
		if err := r.updateStatus(ctx, cluster, want); err != nil {
			return 0, err
		}
		return time.Second, nil
	}
	if !left.Empty() {
		logger.V(2).Info("Waiting for the content of the logical cluster", "remaining", left.Message())
		return 2 * time.Second, nil
	}
	logger.V(2).Info("Purging logical cluster")
	if err := r.purge(ctx, cluster); err != nil {
		return 0, err
	}
	// Only its own finalizer: the cluster (and its Workspace, which waits
	// for it) stays until others' finalizers are released too, as in kcp.
	if !slices.Contains(want.Finalizers, corev1alpha1.LogicalClusterFinalizerName) {
		return 0, nil
	}
	want.Finalizers = slices.DeleteFunc(want.Finalizers, func(f string) bool { return f == corev1alpha1.LogicalClusterFinalizerName })
	if err := r.update(ctx, cluster, want); err != nil && !apierrors.IsNotFound(err) {
		return 0, err
	}
	return 0, nil
}
