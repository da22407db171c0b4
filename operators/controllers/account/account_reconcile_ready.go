package account

import (
	"context"
	"fmt"
	"time"

	corev1alpha1kcp "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	"k8s.io/utils/ptr"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// workspaceReadyStep waits for the Account's workspace to be Ready (every
// initializer done).
type workspaceReadyStep struct {
	// grantCreator, when set, binds the creator to cluster-admin in the
	// Ready workspace (for cores that do not honour the owner annotation a
	// privileged client sets; kcp does, so there the creator is admin from
	// the start).
	grantCreator func(ctx context.Context, cluster, creator string) error
}

func (s workspaceReadyStep) reconcile(ctx context.Context, st *state) result {
	acc, ws := st.account, st.workspace
	const cond = corev1alpha1.ConditionWorkspaceReady
	if ws.Status.Phase != corev1alpha1kcp.LogicalClusterPhaseReady {
		return pending(acc, cond, time.Second, "workspace %s is %s", ws.Name, phase(ws.Status.Phase))
	}
	if creator := ptr.Deref(acc.Spec.Creator, ""); creator != "" && s.grantCreator != nil {
		if err := s.grantCreator(ctx, ws.Spec.Cluster, creator); err != nil {
			return failed(ctx, acc, cond, fmt.Errorf("making %s admin of workspace %s: %w", creator, ws.Name, err))
		}
	}
	return done(acc, cond, fmt.Sprintf("workspace %s is Ready", ws.Name))
}
