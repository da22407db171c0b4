package logicalcluster

import (
	"context"
	"testing"
	"time"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	conditionsv1alpha1 "github.com/kcp-dev/sdk/apis/third_party/conditions/apis/conditions/v1alpha1"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDeletionReconciler(t *testing.T) {
	now := metav1.Now()
	deleted := func(phase corev1alpha1.LogicalClusterPhaseType, terms ...corev1alpha1.LogicalClusterTerminator) *corev1alpha1.LogicalCluster {
		return &corev1alpha1.LogicalCluster{
			ObjectMeta: metav1.ObjectMeta{Name: corev1alpha1.LogicalClusterName, DeletionTimestamp: &now,
				Finalizers: []string{corev1alpha1.LogicalClusterFinalizerName}},
			Status: corev1alpha1.LogicalClusterStatus{Phase: phase, Terminators: terms},
		}
	}
	ws := func(name string, deleting bool) tenancyv1alpha1.Workspace {
		w := tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if deleting {
			w.DeletionTimestamp = &now
		}
		return w
	}
	contentHeld := func(lc *corev1alpha1.LogicalCluster) *corev1alpha1.LogicalCluster {
		conditions.MarkFalse(lc, tenancyv1alpha1.WorkspaceContentDeleted, "SomeResourcesRemain", conditionsv1alpha1.ConditionSeverityInfo,
			"%s", Remaining{Objects: map[string]int{"namespaces.": 1}}.Message())
		return lc
	}
	contentDeleted := func(lc *corev1alpha1.LogicalCluster) *corev1alpha1.LogicalCluster {
		conditions.MarkTrue(lc, tenancyv1alpha1.WorkspaceContentDeleted)
		return lc
	}
	tests := []struct {
		name        string
		lc          *corev1alpha1.LogicalCluster
		children    []tenancyv1alpha1.Workspace
		wantPhase   corev1alpha1.LogicalClusterPhaseType // status written, "" for none
		wantDeleted []string
		wantPurge   bool
		wantRequeue time.Duration
		left        Remaining
		wantContent metav1.ConditionStatus // WorkspaceContentDeleted written, "" for none
	}{
		{name: "terminators left: Terminating", lc: deleted(corev1alpha1.LogicalClusterPhaseReady, "root:t"),
			wantPhase: corev1alpha1.LogicalClusterPhaseTerminating},
		{name: "no terminators: Deleting", lc: deleted(corev1alpha1.LogicalClusterPhaseTerminating),
			wantPhase: corev1alpha1.LogicalClusterPhaseDeleting, wantRequeue: time.Millisecond},
		{name: "children are deleted and awaited", lc: deleted(corev1alpha1.LogicalClusterPhaseDeleting),
			children: []tenancyv1alpha1.Workspace{ws("a", false), ws("b", true)}, wantDeleted: []string{"a"}, wantRequeue: time.Second},
		{name: "content left: condition False", lc: deleted(corev1alpha1.LogicalClusterPhaseDeleting),
			left:        Remaining{Objects: map[string]int{"namespaces.": 1}, Finalizers: map[string]int{}},
			wantContent: metav1.ConditionFalse, wantRequeue: time.Second},
		{name: "content still left: wait", lc: contentHeld(deleted(corev1alpha1.LogicalClusterPhaseDeleting)),
			left: Remaining{Objects: map[string]int{"namespaces.": 1}, Finalizers: map[string]int{}}, wantRequeue: 2 * time.Second},
		{name: "content gone: condition True", lc: contentHeld(deleted(corev1alpha1.LogicalClusterPhaseDeleting)),
			wantContent: metav1.ConditionTrue, wantRequeue: time.Second},
		{name: "no children, no content: purge and release", lc: contentDeleted(deleted(corev1alpha1.LogicalClusterPhaseDeleting)), wantPurge: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var status, updated *corev1alpha1.LogicalCluster
			var deletedNames []string
			purged := false
			r := &deletionReconciler{
				updateStatus: func(_ context.Context, _ string, lc *corev1alpha1.LogicalCluster) error { status = lc; return nil },
				listWorkspaces: func(context.Context, string) ([]tenancyv1alpha1.Workspace, error) {
					return tt.children, nil
				},
				deleteWorkspace: func(_ context.Context, _, name string) error { deletedNames = append(deletedNames, name); return nil },
				purge:           func(context.Context, string) error { purged = true; return nil },
				deleteContent: func(context.Context, string) (Remaining, error) {
					if tt.left.Objects == nil {
						return NewRemaining(), nil
					}
					return tt.left, nil
				},
				update: func(_ context.Context, _ string, lc *corev1alpha1.LogicalCluster) error { updated = lc; return nil },
			}
			requeue, err := r.reconcile(context.Background(), "c1", tt.lc)
			if err != nil {
				t.Fatalf("reconcile: %v", err)
			}
			if requeue != tt.wantRequeue {
				t.Errorf("requeue = %v, want %v", requeue, tt.wantRequeue)
			}
			if tt.wantContent != "" {
				if status == nil || conditions.Get(status, tenancyv1alpha1.WorkspaceContentDeleted) == nil || conditions.Get(status, tenancyv1alpha1.WorkspaceContentDeleted).Status != corev1.ConditionStatus(tt.wantContent) {
					t.Errorf("status written = %v, want %s %s", status, tenancyv1alpha1.WorkspaceContentDeleted, tt.wantContent)
				}
				return
			}
			switch {
			case tt.wantPhase == "" && status != nil:
				t.Errorf("status written with phase %q, want no status write", status.Status.Phase)
			case tt.wantPhase != "" && (status == nil || status.Status.Phase != tt.wantPhase):
				t.Errorf("status written = %v, want phase %q", status, tt.wantPhase)
			}
			if len(deletedNames) != len(tt.wantDeleted) || (len(deletedNames) > 0 && deletedNames[0] != tt.wantDeleted[0]) {
				t.Errorf("deleted children %v, want %v", deletedNames, tt.wantDeleted)
			}
			if purged != tt.wantPurge {
				t.Errorf("purged = %v, want %v", purged, tt.wantPurge)
			}
			if tt.wantPurge && (updated == nil || len(updated.Finalizers) != 0) {
				t.Errorf("finalizer not released: %v", updated)
			}
			if !tt.wantPurge && updated != nil {
				t.Errorf("object updated before the purge: finalizers %v", updated.Finalizers)
			}
		})
	}
}
