package workspace

import (
	"context"
	"slices"
	"time"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/core/internal/tenancy"
)

// deletionReconciler deletes a deleted Workspace's LogicalCluster and
// reports, as kcp, Terminating while terminators remain and Deleting after,
// with the LogicalCluster's terminators and WorkspaceContentDeleted
// condition (which objects and finalizers hold it); once the
// LogicalCluster is gone it releases the Workspace's finalizer. A
// LogicalCluster whose spec.owner names another Workspace (or none) is
// not this Workspace's to delete, whatever its spec.cluster says: it is
// left alone.
type deletionReconciler struct {
	getLogicalCluster    func(ctx context.Context, cluster string) (*corev1alpha1.LogicalCluster, error)
	deleteLogicalCluster func(ctx context.Context, cluster string) error
	update               func(ctx context.Context, parent string, ws *tenancyv1alpha1.Workspace) (*tenancyv1alpha1.Workspace, error)
	updateStatus         func(ctx context.Context, parent string, ws *tenancyv1alpha1.Workspace) error
}

func (r *deletionReconciler) reconcile(ctx context.Context, parent string, ws *tenancyv1alpha1.Workspace) (time.Duration, error) {
	if ws.Spec.Cluster != "" {
		lc, err := r.getLogicalCluster(ctx, ws.Spec.Cluster)
		switch {
		case err == nil && !tenancy.OwnedBy(lc, parent, ws.Name, string(ws.UID)):
			klog.FromContext(ctx).Info("Not deleting a logical cluster the workspace does not own", "logicalCluster", ws.Spec.Cluster)
		case err == nil:
			if lc.DeletionTimestamp == nil {
				klog.FromContext(ctx).V(2).Info("Deleting logical cluster", "logicalCluster", ws.Spec.Cluster)
				if err := r.deleteLogicalCluster(ctx, ws.Spec.Cluster); err != nil && !apierrors.IsNotFound(err) {
					return 0, err
				}
			}
			want := ws.DeepCopy()
			want.Status.Terminators = lc.Status.Terminators
			want.Status.Phase = corev1alpha1.LogicalClusterPhaseDeleting
			if len(lc.Status.Terminators) > 0 {
				want.Status.Phase = corev1alpha1.LogicalClusterPhaseTerminating
			}
			if c := conditions.Get(lc, tenancyv1alpha1.WorkspaceContentDeleted); c != nil {
				conditions.Set(want, c)
			}
			if !equality.Semantic.DeepEqual(ws.Status, want.Status) {
				return time.Second, r.updateStatus(ctx, parent, want)
			}
			return 2 * time.Second, nil
		case !apierrors.IsNotFound(err):
			return 0, err
		}
	}
	ws = ws.DeepCopy()
	ws.Finalizers = slices.DeleteFunc(ws.Finalizers, func(f string) bool { return f == corev1alpha1.LogicalClusterFinalizerName })
	_, err := r.update(ctx, parent, ws)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	return 0, err
}
