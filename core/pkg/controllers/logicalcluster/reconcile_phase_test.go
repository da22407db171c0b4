package logicalcluster

import (
	"context"
	"testing"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/core/pkg/tenancy"
)

func lcWith(phase corev1alpha1.LogicalClusterPhaseType, inits ...corev1alpha1.LogicalClusterInitializer) *corev1alpha1.LogicalCluster {
	return &corev1alpha1.LogicalCluster{
		ObjectMeta: metav1.ObjectMeta{Name: corev1alpha1.LogicalClusterName, Labels: tenancy.WithLifecycleLabels(nil, inits, nil)},
		Status:     corev1alpha1.LogicalClusterStatus{Phase: phase, Initializers: inits},
	}
}

func TestPhaseReconciler(t *testing.T) {
	tests := []struct {
		name      string
		lc        *corev1alpha1.LogicalCluster
		wantWrite bool
		wantPhase corev1alpha1.LogicalClusterPhaseType
	}{
		{"initializing without initializers becomes Ready", lcWith(corev1alpha1.LogicalClusterPhaseInitializing),
			true, corev1alpha1.LogicalClusterPhaseReady},
		{"initializing with an initializer stays", lcWith(corev1alpha1.LogicalClusterPhaseInitializing, "root:universal"),
			false, ""},
		{"ready stays", lcWith(corev1alpha1.LogicalClusterPhaseReady), false, ""},
		{"stale initializer label is written", &corev1alpha1.LogicalCluster{
			ObjectMeta: metav1.ObjectMeta{Name: corev1alpha1.LogicalClusterName, Labels: tenancy.LifecycleLabels([]corev1alpha1.LogicalClusterInitializer{"a:b"}, nil)},
			Status:     corev1alpha1.LogicalClusterStatus{Phase: corev1alpha1.LogicalClusterPhaseReady}},
			true, corev1alpha1.LogicalClusterPhaseReady},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var written *corev1alpha1.LogicalCluster
			r := &phaseReconciler{updateStatus: func(_ context.Context, cluster string, lc *corev1alpha1.LogicalCluster) error {
				if cluster != "c1" {
					t.Errorf("wrote to cluster %q, want c1", cluster)
				}
				written = lc
				return nil
			}}
			if _, err := r.reconcile(context.Background(), "c1", tt.lc); err != nil {
				t.Fatalf("reconcile: %v", err)
			}
			if (written != nil) != tt.wantWrite {
				t.Fatalf("status written = %v, want %v", written != nil, tt.wantWrite)
			}
			if written == nil {
				return
			}
			if written.Status.Phase != tt.wantPhase {
				t.Errorf("written phase = %q, want %q", written.Status.Phase, tt.wantPhase)
			}
			for k := range written.Labels {
				if tenancy.IsLifecycleLabel(k) && len(written.Status.Initializers) == 0 {
					t.Errorf("label %s kept although no initializer is left", k)
				}
			}
		})
	}
}
