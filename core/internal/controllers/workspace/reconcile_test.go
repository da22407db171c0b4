package workspace

import (
	"context"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var notFound = apierrors.NewNotFound(schema.GroupResource{Resource: "logicalclusters"}, "cluster")

func workspace(cluster string, phase corev1alpha1.LogicalClusterPhaseType, deleting bool) *tenancyv1alpha1.Workspace {
	ws := &tenancyv1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "team", UID: "uid-1", Finalizers: []string{corev1alpha1.LogicalClusterFinalizerName, "other"}},
		Spec:       tenancyv1alpha1.WorkspaceSpec{Cluster: cluster},
		Status:     tenancyv1alpha1.WorkspaceStatus{Phase: phase},
	}
	if deleting {
		now := metav1.Now()
		ws.DeletionTimestamp = &now
	}
	return ws
}

// owned is the spec.owner of the logical cluster of workspace()'s
// Workspace, in parent root.
func owned() *corev1alpha1.LogicalClusterOwner {
	return &corev1alpha1.LogicalClusterOwner{APIVersion: "tenancy.kcp.io/v1alpha1", Resource: "workspaces", Cluster: "root", Name: "team", UID: "uid-1"}
}

// recorder records what a step writes.
type recorder struct {
	updated, status *tenancyv1alpha1.Workspace
}

func (r *recorder) update(_ context.Context, _ string, ws *tenancyv1alpha1.Workspace) (*tenancyv1alpha1.Workspace, error) {
	r.updated = ws
	return ws.DeepCopy(), nil
}

func (r *recorder) updateStatus(_ context.Context, _ string, ws *tenancyv1alpha1.Workspace) error {
	r.status = ws
	return nil
}
