package workspace

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	conditionsv1alpha1 "github.com/kcp-dev/sdk/apis/third_party/conditions/apis/conditions/v1alpha1"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDeletionReconciler(t *testing.T) {
	now := metav1.Now()
	live := &corev1alpha1.LogicalCluster{Spec: corev1alpha1.LogicalClusterSpec{Owner: owned()},
		Status: corev1alpha1.LogicalClusterStatus{Terminators: []corev1alpha1.LogicalClusterTerminator{"root:t"}}}
	going := live.DeepCopy()
	going.DeletionTimestamp = &now
	// Another workspace's cluster (a Workspace whose spec.cluster names it),
	// and one no Workspace owns (a home workspace's).
	foreign := live.DeepCopy()
	foreign.Spec.Owner.Cluster, foreign.Spec.Owner.UID = "victim-org", "uid-victim"
	holding := going.DeepCopy()
	holding.Status.Terminators = nil
	conditions.MarkFalse(holding, tenancyv1alpha1.WorkspaceContentDeleted, "SomeResourcesRemain", conditionsv1alpha1.ConditionSeverityInfo, "held")
	terminating := func(ws *tenancyv1alpha1.Workspace) *tenancyv1alpha1.Workspace {
		ws.Status.Terminators = going.Status.Terminators
		return ws
	}
	home := live.DeepCopy()
	home.Spec.Owner = nil
	tests := []struct {
		name          string
		ws            *tenancyv1alpha1.Workspace
		lc            *corev1alpha1.LogicalCluster // nil: not found
		wantDeleteLC  bool
		wantPhase     corev1alpha1.LogicalClusterPhaseType // status written; "" for none
		wantFinalizer bool                                 // finalizer released
		wantRequeue   time.Duration
	}{
		{name: "live cluster is deleted, workspace Terminating", ws: workspace("c1", corev1alpha1.LogicalClusterPhaseReady, true), lc: live,
			wantDeleteLC: true, wantPhase: corev1alpha1.LogicalClusterPhaseTerminating, wantRequeue: time.Second},
		{name: "cluster going: wait", ws: terminating(workspace("c1", corev1alpha1.LogicalClusterPhaseTerminating, true)), lc: going,
			wantRequeue: 2 * time.Second},
		{name: "cluster going without terminators: Deleting, content condition mirrored", ws: terminating(workspace("c1", corev1alpha1.LogicalClusterPhaseTerminating, true)),
			lc: holding, wantPhase: corev1alpha1.LogicalClusterPhaseDeleting, wantRequeue: time.Second},
		{name: "cluster gone: release finalizer", ws: workspace("c1", corev1alpha1.LogicalClusterPhaseTerminating, true),
			wantFinalizer: true},
		{name: "never scheduled: release finalizer", ws: workspace("", "", true), wantFinalizer: true},
		{name: "another workspace's cluster is not deleted", ws: workspace("c1", corev1alpha1.LogicalClusterPhaseReady, true), lc: foreign,
			wantFinalizer: true},
		{name: "a cluster no workspace owns is not deleted", ws: workspace("c1", corev1alpha1.LogicalClusterPhaseReady, true), lc: home,
			wantFinalizer: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			deletedLC := false
			r := &deletionReconciler{
				getLogicalCluster: func(_ context.Context, cluster string) (*corev1alpha1.LogicalCluster, error) {
					if cluster != "c1" {
						t.Errorf("read logical cluster %q, want c1", cluster)
					}
					if tt.lc == nil {
						return nil, notFound
					}
					return tt.lc, nil
				},
				deleteLogicalCluster: func(context.Context, string) error { deletedLC = true; return nil },
				update:               rec.update, updateStatus: rec.updateStatus,
			}
			requeue, err := r.reconcile(context.Background(), "root", tt.ws)
			if err != nil {
				t.Fatalf("reconcile: %v", err)
			}
			if requeue != tt.wantRequeue {
				t.Errorf("requeue = %v, want %v", requeue, tt.wantRequeue)
			}
			if deletedLC != tt.wantDeleteLC {
				t.Errorf("logical cluster deleted = %v, want %v", deletedLC, tt.wantDeleteLC)
			}
			if got := rec.status != nil && rec.status.Status.Phase == tt.wantPhase; tt.wantPhase != "" && !got {
				t.Errorf("status written = %v, want phase %s", rec.status, tt.wantPhase)
			}
			if tt.lc == holding && (rec.status == nil || !conditions.IsFalse(rec.status, tenancyv1alpha1.WorkspaceContentDeleted)) {
				t.Errorf("status written = %v, want condition %s False mirrored", rec.status, tenancyv1alpha1.WorkspaceContentDeleted)
			}
			if tt.wantPhase == "" && rec.status != nil {
				t.Errorf("status written with phase %s, want none", rec.status.Status.Phase)
			}
			if tt.wantFinalizer {
				if rec.updated == nil || slices.Contains(rec.updated.Finalizers, corev1alpha1.LogicalClusterFinalizerName) ||
					!slices.Contains(rec.updated.Finalizers, "other") {
					t.Errorf("finalizers written = %v, want only %q removed", rec.updated, corev1alpha1.LogicalClusterFinalizerName)
				}
			} else if rec.updated != nil {
				t.Errorf("workspace updated (finalizers %v) while its cluster exists", rec.updated.Finalizers)
			}
		})
	}
}
