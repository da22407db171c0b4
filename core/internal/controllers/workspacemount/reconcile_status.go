package workspacemount

import (
	"context"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	conditionsv1alpha1 "github.com/kcp-dev/sdk/apis/third_party/conditions/apis/conditions/v1alpha1"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/meshplane/meshplane/core/internal/mounts"
)

// statusReconciler sets the WorkspaceMountReady condition from the mount
// object and the phase with it: Ready while the mount is Ready, else
// Unavailable (kcp turns any False Workspace* condition into Unavailable).
type statusReconciler struct {
	updateStatus func(ctx context.Context, parent string, ws *tenancyv1alpha1.Workspace) error
}

func (r *statusReconciler) reconcile(ctx context.Context, parent string, ws *tenancyv1alpha1.Workspace, s mounts.State) error {
	next := desiredStatus(ws, s)
	if equality.Semantic.DeepEqual(next.Status, ws.Status) {
		return nil
	}
	return r.updateStatus(ctx, parent, next)
}

// desiredStatus returns a copy of ws with the status s calls for.
func desiredStatus(ws *tenancyv1alpha1.Workspace, s mounts.State) *tenancyv1alpha1.Workspace {
	ws = ws.DeepCopy()
	if s.Ready() {
		conditions.MarkTrue(ws, tenancyv1alpha1.MountConditionReady)
		ws.Status.Phase = corev1alpha1.LogicalClusterPhaseReady
	} else {
		conditions.MarkFalse(ws, tenancyv1alpha1.MountConditionReady, s.Reason, conditionsv1alpha1.ConditionSeverityError, "%s", s.Message)
		ws.Status.Phase = corev1alpha1.LogicalClusterPhaseUnavailable
	}
	return ws
}
