package account

import (
	"context"
	"fmt"
	"time"

	corev1alpha1kcp "github.com/kcp-dev/sdk/apis/core/v1alpha1"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// workspaceReadyStep waits for the Account's workspace to be Ready (every
// initializer done).
type workspaceReadyStep struct{}

func (workspaceReadyStep) reconcile(_ context.Context, st *state) result {
	acc, ws := st.account, st.workspace
	const cond = corev1alpha1.ConditionWorkspaceReady
	if ws.Status.Phase != corev1alpha1kcp.LogicalClusterPhaseReady {
		if ws.Status.Phase == corev1alpha1kcp.LogicalClusterPhaseInitializing && len(ws.Status.Initializers) > 0 {
			return pending(acc, cond, time.Second, "workspace %s is Initializing, waiting for initializers %v", ws.Name, ws.Status.Initializers)
		}
		return pending(acc, cond, time.Second, "workspace %s is %s", ws.Name, phase(ws.Status.Phase))
	}
	return done(acc, cond, fmt.Sprintf("workspace %s is Ready", ws.Name))
}
