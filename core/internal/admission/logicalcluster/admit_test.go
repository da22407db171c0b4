package logicalcluster

import (
	"context"
	"testing"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/meshplane/meshplane/core/internal/tenancy"
)

func TestAdmitInitializerRemoval(t *testing.T) {
	lc := func(labels map[string]string, inits ...corev1alpha1.LogicalClusterInitializer) *corev1alpha1.LogicalCluster {
		return &corev1alpha1.LogicalCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster", Labels: labels},
			Status: corev1alpha1.LogicalClusterStatus{Phase: corev1alpha1.LogicalClusterPhaseInitializing, Initializers: inits}}
	}
	admit := func(obj, old *corev1alpha1.LogicalCluster, subresource string) {
		t.Helper()
		a := admission.NewAttributesRecord(obj, old, corev1alpha1.SchemeGroupVersion.WithKind("LogicalCluster"), "", "cluster",
			corev1alpha1.Resource("logicalclusters").WithVersion("v1alpha1"), subresource, admission.Update, &metav1.UpdateOptions{}, false,
			&user.DefaultInfo{Name: "operator"})
		if err := New().Admit(context.Background(), a, nil); err != nil {
			t.Fatal(err)
		}
	}
	both := tenancy.LifecycleLabels([]corev1alpha1.LogicalClusterInitializer{"root:a", "root:b"}, nil)
	both["app"] = "x"

	// One of two initializers removes itself: its label goes, the rest stays.
	obj := lc(both, "root:b")
	admit(obj, lc(both, "root:a", "root:b"), "status")
	want := tenancy.WithLifecycleLabels(map[string]string{"app": "x"}, []corev1alpha1.LogicalClusterInitializer{"root:b"}, nil)
	if len(obj.Labels) != len(want) || obj.Labels["app"] != "x" || obj.Status.Phase != corev1alpha1.LogicalClusterPhaseInitializing {
		t.Fatalf("after removing root:a: labels %v phase %s, want %v Initializing", obj.Labels, obj.Status.Phase, want)
	}
	for k, v := range want {
		if obj.Labels[k] != v {
			t.Fatalf("after removing root:a: labels %v, want %v", obj.Labels, want)
		}
	}
	if err := validateUpdate(lc(both, "root:a", "root:b"), obj); err != nil {
		t.Fatalf("the admitted update is refused: %v", err)
	}

	// The last one: no lifecycle label left, Ready in the same write.
	obj = lc(want)
	admit(obj, lc(want, "root:b"), "status")
	if len(obj.Labels) != 1 || obj.Status.Phase != corev1alpha1.LogicalClusterPhaseReady {
		t.Fatalf("after the last initializer: labels %v phase %s, want only app and Ready", obj.Labels, obj.Status.Phase)
	}
	if err := validateUpdate(lc(want, "root:b"), obj); err != nil {
		t.Fatalf("the admitted update is refused: %v", err)
	}

	// Not the status subresource: untouched.
	obj = lc(both)
	admit(obj, lc(both, "root:a", "root:b"), "")
	if len(obj.Labels) != 3 || obj.Status.Phase != corev1alpha1.LogicalClusterPhaseInitializing {
		t.Fatalf("main resource update changed: labels %v phase %s", obj.Labels, obj.Status.Phase)
	}
}
