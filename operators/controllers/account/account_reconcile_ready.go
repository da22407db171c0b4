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
	ws := st.workspace
	if ws.Status.Phase != corev1alpha1kcp.LogicalClusterPhaseReady {
		return pending(st.account, corev1alpha1.ConditionWorkspaceReady, time.Second, "workspace %s is %s", ws.Name, phase(ws.Status.Phase))
	}
	return done(st.account, corev1alpha1.ConditionWorkspaceReady, fmt.Sprintf("workspace %s is Ready", ws.Name))
}
