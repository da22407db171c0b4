package workspace

import (
	"context"
	"testing"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// initializing is an Initializing workspace that still lists inits.
func initializing(cluster string, inits ...corev1alpha1.LogicalClusterInitializer) *tenancyv1alpha1.Workspace {
	ws := workspace(cluster, corev1alpha1.LogicalClusterPhaseInitializing, false)
	ws.Status.Initializers = inits
	return ws
}

func TestPhaseReconciler(t *testing.T) {
	now := metav1.Now()
	lc := func(phase corev1alpha1.LogicalClusterPhaseType, deleting bool, inits ...corev1alpha1.LogicalClusterInitializer) *corev1alpha1.LogicalCluster {
		l := &corev1alpha1.LogicalCluster{Spec: corev1alpha1.LogicalClusterSpec{Owner: owned()},
			Status: corev1alpha1.LogicalClusterStatus{Phase: phase, Initializers: inits}}
		if deleting {
			l.DeletionTimestamp = &now
		}
		return l
	}
	tests := []struct {
		name      string
		ws        *tenancyv1alpha1.Workspace
		lc        *corev1alpha1.LogicalCluster
		wantPhase corev1alpha1.LogicalClusterPhaseType // "" for no write
	}{
		{"cluster Ready: workspace Ready", workspace("c1", corev1alpha1.LogicalClusterPhaseInitializing, false),
			lc(corev1alpha1.LogicalClusterPhaseReady, false), corev1alpha1.LogicalClusterPhaseReady},
		{"same phase and initializers: no write", workspace("c1", corev1alpha1.LogicalClusterPhaseReady, false),
			lc(corev1alpha1.LogicalClusterPhaseReady, false), ""},
		{"initializers changed: written", workspace("c1", corev1alpha1.LogicalClusterPhaseInitializing, false),
			lc(corev1alpha1.LogicalClusterPhaseInitializing, false, "root:universal"), corev1alpha1.LogicalClusterPhaseInitializing},
		{"last initializer gone: no write until the cluster is Ready", initializing("c1", "root:universal"),
			lc(corev1alpha1.LogicalClusterPhaseInitializing, false), ""},
		{"cluster being deleted without terminators: Deleting, as kcp", workspace("c1", corev1alpha1.LogicalClusterPhaseReady, false),
			lc(corev1alpha1.LogicalClusterPhaseReady, true), corev1alpha1.LogicalClusterPhaseDeleting},
		{"cluster gone: no write", workspace("c1", corev1alpha1.LogicalClusterPhaseReady, false), nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			r := &phaseReconciler{
				getLogicalCluster: func(context.Context, string) (*corev1alpha1.LogicalCluster, error) {
					if tt.lc == nil {
						return nil, notFound
					}
					return tt.lc, nil
				},
				updateStatus: rec.updateStatus,
			}
			if err := r.reconcile(context.Background(), "root", tt.ws); err != nil {
				t.Fatalf("reconcile: %v", err)
			}
			if tt.wantPhase == "" {
				if rec.status != nil {
					t.Errorf("status written with phase %s, want none", rec.status.Status.Phase)
				}
				return
			}
			if rec.status == nil || rec.status.Status.Phase != tt.wantPhase {
				t.Fatalf("status written = %+v, want phase %s", rec.status, tt.wantPhase)
			}
			if got := conditions.IsTrue(rec.status, tenancyv1alpha1.WorkspaceInitialized); got != (tt.wantPhase == corev1alpha1.LogicalClusterPhaseReady) {
				t.Errorf("Initialized = %v in phase %s", got, tt.wantPhase)
			}
			if len(rec.status.Status.Initializers) != len(tt.lc.Status.Initializers) {
				t.Errorf("initializers = %v, want %v", rec.status.Status.Initializers, tt.lc.Status.Initializers)
			}
		})
	}
}
