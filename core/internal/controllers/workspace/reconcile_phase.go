package workspace

import (
	"context"
	"slices"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/meshplane/meshplane/core/internal/tenancy"
)

// phaseReconciler mirrors the LogicalCluster's phase, initializers and
// terminators into the Workspace's status, when the LogicalCluster is the
// Workspace's own (its spec.owner names it).
type phaseReconciler struct {
	getLogicalCluster func(ctx context.Context, cluster string) (*corev1alpha1.LogicalCluster, error)
	updateStatus      func(ctx context.Context, parent string, ws *tenancyv1alpha1.Workspace) error
}

func (r *phaseReconciler) reconcile(ctx context.Context, parent string, ws *tenancyv1alpha1.Workspace) error {
	lc, err := r.getLogicalCluster(ctx, ws.Spec.Cluster)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !tenancy.OwnedBy(lc, parent, ws.Name, string(ws.UID)) {
		return nil
	}
	phase := lc.Status.Phase
	if lc.DeletionTimestamp != nil {
		phase = corev1alpha1.LogicalClusterPhaseDeleting
		if len(lc.Status.Terminators) > 0 {
			phase = corev1alpha1.LogicalClusterPhaseTerminating
		}
	} else if phase == corev1alpha1.LogicalClusterPhaseInitializing && len(lc.Status.Initializers) == 0 {
		// The last initializer is gone; the logicalcluster controller
		// makes the cluster Ready next, and that is mirrored (one status
		// write and event less per workspace than mirroring both).
		return nil
	}
	if ws.Status.Phase == phase && slices.Equal(ws.Status.Initializers, lc.Status.Initializers) {
		return nil
	}
	ws = ws.DeepCopy()
	ws.Status.Phase = phase
	ws.Status.Initializers = lc.Status.Initializers
	ws.Status.Terminators = lc.Status.Terminators
	if phase == corev1alpha1.LogicalClusterPhaseReady {
		conditions.MarkTrue(ws, tenancyv1alpha1.WorkspaceInitialized)
	}
	return r.updateStatus(ctx, parent, ws)
}
