package account

import (
	"context"
	"errors"
	"testing"

	corev1alpha1kcp "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

func TestInitializeStep(t *testing.T) {
	var calls []string
	s := &initializeStep{initializer: "pms:account-operator",
		bindCreator: func(_ context.Context, cluster, creator string) error {
			calls = append(calls, "bind "+cluster+" "+creator)
			return nil
		},
		release: func(_ context.Context, cluster string) error {
			calls = append(calls, "release "+cluster)
			return nil
		}}
	ws := readyWorkspace("acme", "c-acme")

	// Ready, or initializing without the operator's initializer: nothing to do.
	st := &state{account: org("acme"), workspace: ws}
	if res := s.reconcile(context.Background(), st); !res.done || len(calls) > 0 {
		t.Fatalf("Ready workspace: done=%v calls=%v", res.done, calls)
	}
	ws.Status.Phase = "Initializing"
	ws.Status.Initializers = []corev1alpha1kcp.LogicalClusterInitializer{"system:apibindings"}
	if res := s.reconcile(context.Background(), st); !res.done || len(calls) > 0 {
		t.Fatalf("foreign initializer only: done=%v calls=%v", res.done, calls)
	}

	// Carrying the operator's: the creator is bound first, then the initializer goes.
	ws.Status.Initializers = append(ws.Status.Initializers, "pms:account-operator")
	if res := s.reconcile(context.Background(), st); res.done {
		t.Fatal("initializing counted as done")
	}
	want := []string{"bind c-acme alice", "release c-acme"}
	if len(calls) != 2 || calls[0] != want[0] || calls[1] != want[1] {
		t.Fatalf("calls %v, want %v", calls, want)
	}
	requireCondition(t, st.account, corev1alpha1.ConditionWorkspaceReady, metav1.ConditionFalse, corev1alpha1.ReasonPending)

	// Reconciled again before the Workspace shows the initializer gone: no
	// second bind or release (the virtual workspace would refuse them).
	calls = nil
	st = &state{account: org("acme"), workspace: ws}
	if res := s.reconcile(context.Background(), st); res.done || len(calls) > 0 {
		t.Fatalf("after release: done=%v calls=%v", res.done, calls)
	}
	requireCondition(t, st.account, corev1alpha1.ConditionWorkspaceReady, metav1.ConditionFalse, corev1alpha1.ReasonPending)

	// A refused binding shows on the Account and keeps the initializer.
	s.bindCreator = func(context.Context, string, string) error { return errors.New("forbidden") }
	ws = ws.DeepCopy()
	ws.Spec.Cluster = "c-other"
	st = &state{account: org("acme"), workspace: ws}
	if res := s.reconcile(context.Background(), st); res.done || len(calls) > 0 {
		t.Fatalf("failed bind: done=%v calls=%v", res.done, calls)
	}
	requireCondition(t, st.account, corev1alpha1.ConditionWorkspaceReady, metav1.ConditionFalse, corev1alpha1.ReasonError)
}
