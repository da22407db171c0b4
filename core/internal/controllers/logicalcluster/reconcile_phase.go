package logicalcluster

import (
	"context"
	"time"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/core/internal/tenancy"
)

// phaseReconciler moves a live cluster from Initializing to Ready once no
// initializer is left, and keeps its initializer labels in sync.
type phaseReconciler struct {
	updateStatus func(ctx context.Context, cluster string, lc *corev1alpha1.LogicalCluster) error
}

func (r *phaseReconciler) reconcile(ctx context.Context, cluster string, lc *corev1alpha1.LogicalCluster) (time.Duration, error) {
	want := lc.DeepCopy()
	tenancy.SettleInitializers(want)
	if want.Status.Phase != lc.Status.Phase {
		klog.FromContext(ctx).V(2).Info("Logical cluster initialized", "phase", want.Status.Phase)
	}
	return 0, writeStatus(ctx, r.updateStatus, cluster, lc, want, false)
}
