package workspacemount

import (
	"context"
	"testing"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	corev1 "k8s.io/api/core/v1"

	"github.com/meshplane/meshplane/core/internal/mounts"
)

func mounted() *tenancyv1alpha1.Workspace {
	ws := &tenancyv1alpha1.Workspace{}
	ws.Name = "b"
	ws.Spec.Mount = &tenancyv1alpha1.Mount{Reference: tenancyv1alpha1.ObjectReference{APIVersion: "x.io/v1", Kind: "KubeCluster", Name: "m"}}
	ws.Status.Phase = corev1alpha1.LogicalClusterPhaseScheduling
	return ws
}

var (
	ready    = mounts.State{URL: "https://m", Phase: tenancyv1alpha1.MountPhaseReady}
	notReady = mounts.State{URL: "https://m", Phase: tenancyv1alpha1.MountPhaseConnecting, Reason: tenancyv1alpha1.MountObjectNotReadyReason, Message: "connecting"}
)

func TestStatus(t *testing.T) {
	for _, tc := range []struct {
		name   string
		state  mounts.State
		phase  corev1alpha1.LogicalClusterPhaseType
		status corev1.ConditionStatus
		reason string
	}{
		{"ready", ready, corev1alpha1.LogicalClusterPhaseReady, corev1.ConditionTrue, ""},
		{"connecting", notReady, corev1alpha1.LogicalClusterPhaseUnavailable, corev1.ConditionFalse, tenancyv1alpha1.MountObjectNotReadyReason},
		{"not found", mounts.NotFound(mounted().Spec.Mount.Reference, ""), corev1alpha1.LogicalClusterPhaseUnavailable, corev1.ConditionFalse, tenancyv1alpha1.MountObjectNotFoundReason},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var written *tenancyv1alpha1.Workspace
			r := &statusReconciler{updateStatus: func(_ context.Context, _ string, ws *tenancyv1alpha1.Workspace) error { written = ws; return nil }}
			if err := r.reconcile(context.Background(), "org", mounted(), tc.state); err != nil {
				t.Fatal(err)
			}
			if written == nil {
				t.Fatal("no status written")
			}
			c := conditions.Get(written, tenancyv1alpha1.MountConditionReady)
			if written.Status.Phase != tc.phase || c == nil || c.Status != tc.status || c.Reason != tc.reason {
				t.Fatalf("phase %s condition %+v, want phase %s, WorkspaceMountReady %s/%s", written.Status.Phase, c, tc.phase, tc.status, tc.reason)
			}
			// A second pass over the written status writes nothing.
			again := false
			r.updateStatus = func(context.Context, string, *tenancyv1alpha1.Workspace) error { again = true; return nil }
			if err := r.reconcile(context.Background(), "org", written, tc.state); err != nil || again {
				t.Errorf("reconciling an up-to-date status wrote it again (err %v)", err)
			}
		})
	}
}

func TestURL(t *testing.T) {
	var written *tenancyv1alpha1.Workspace
	r := &urlReconciler{update: func(_ context.Context, _ string, ws *tenancyv1alpha1.Workspace) (*tenancyv1alpha1.Workspace, error) {
		written = ws
		return ws, nil
	}}
	ws, err := r.reconcile(context.Background(), "org", mounted(), ready)
	if err != nil || written == nil || ws.Spec.URL != "https://m" {
		t.Fatalf("spec.URL = %q (written %v, err %v), want the mount's URL", ws.Spec.URL, written != nil, err)
	}
	written = nil
	if _, err := r.reconcile(context.Background(), "org", ws, mounts.State{Phase: tenancyv1alpha1.MountPhaseInitializing}); err != nil || written != nil {
		t.Errorf("a mount without URL changed spec.URL (err %v)", err)
	}
}
