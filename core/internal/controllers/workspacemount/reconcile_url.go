package workspacemount

import (
	"context"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/core/internal/mounts"
)

// urlReconciler copies the mount object's status.URL into the Workspace's
// spec.URL (as kcp does); a mount without a URL leaves it as it is.
type urlReconciler struct {
	update func(ctx context.Context, parent string, ws *tenancyv1alpha1.Workspace) (*tenancyv1alpha1.Workspace, error)
}

func (r *urlReconciler) reconcile(ctx context.Context, parent string, ws *tenancyv1alpha1.Workspace, s mounts.State) (*tenancyv1alpha1.Workspace, error) {
	if s.URL == "" || ws.Spec.URL == s.URL {
		return ws, nil
	}
	klog.FromContext(ctx).V(2).Info("Mount URL changed", "url", s.URL)
	ws = ws.DeepCopy()
	ws.Spec.URL = s.URL
	return r.update(ctx, parent, ws)
}
