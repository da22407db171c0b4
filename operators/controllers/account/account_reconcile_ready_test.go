package account

import (
	"context"
	"strings"
	"testing"

	corev1alpha1kcp "github.com/kcp-dev/sdk/apis/core/v1alpha1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

func TestWorkspaceReadyStep(t *testing.T) {
	ws := readyWorkspace("acme", "c-acme")
	ws.Status.Phase = "Initializing"
	ws.Status.Initializers = []corev1alpha1kcp.LogicalClusterInitializer{"root:security"}
	st := &state{account: org("acme"), workspace: ws}
	if res := (workspaceReadyStep{}).reconcile(context.Background(), st); res.done {
		t.Fatal("an Initializing workspace counted as ready")
	}
	c := requireCondition(t, st.account, corev1alpha1.ConditionWorkspaceReady, metav1.ConditionFalse, corev1alpha1.ReasonPending)
	if !strings.Contains(c.Message, "root:security") {
		t.Errorf("message %q does not name the initializer waited for", c.Message)
	}
	ws.Status.Phase = "Ready"
	if res := (workspaceReadyStep{}).reconcile(context.Background(), st); !res.done {
		t.Fatal("a Ready workspace not accepted")
	}
	requireCondition(t, st.account, corev1alpha1.ConditionWorkspaceReady, metav1.ConditionTrue, corev1alpha1.ReasonReconciled)
}
