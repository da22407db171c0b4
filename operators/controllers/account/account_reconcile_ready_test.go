package account

import (
	"context"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

func TestWorkspaceReadyStep(t *testing.T) {
	ws := readyWorkspace("acme", "c-acme")
	ws.Status.Phase = "Initializing"
	granted := ""
	s := workspaceReadyStep{grantCreator: func(_ context.Context, cluster, creator string) error {
		granted = cluster + "/" + creator
		return nil
	}}
	st := &state{account: org("acme"), workspace: ws}
	if res := s.reconcile(context.Background(), st); res.done {
		t.Fatal("an Initializing workspace counted as ready")
	}
	requireCondition(t, st.account, corev1alpha1.ConditionWorkspaceReady, metav1.ConditionFalse, corev1alpha1.ReasonPending)
	if granted != "" {
		t.Fatal("creator granted before the workspace is Ready")
	}
	ws.Status.Phase = "Ready"
	if res := s.reconcile(context.Background(), st); !res.done {
		t.Fatal("a Ready workspace not accepted")
	}
	requireCondition(t, st.account, corev1alpha1.ConditionWorkspaceReady, metav1.ConditionTrue, corev1alpha1.ReasonReconciled)
	if granted != "c-acme/alice" {
		t.Errorf("granted %q, want c-acme/alice", granted)
	}

	s.grantCreator = func(context.Context, string, string) error { return errors.New("rbac refused") }
	st = &state{account: org("acme"), workspace: ws}
	if res := s.reconcile(context.Background(), st); res.done {
		t.Fatal("a failed grant counted as done")
	}
	requireCondition(t, st.account, corev1alpha1.ConditionWorkspaceReady, metav1.ConditionFalse, corev1alpha1.ReasonError)
}
