package lifecycle

import (
	"context"
	"testing"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/core/internal/tenancy"
)

func TestRebaseRelease(t *testing.T) {
	const a, b = "root:a", "root:b"
	lc := func(rv string, inits ...corev1alpha1.LogicalClusterInitializer) *corev1alpha1.LogicalCluster {
		out := &corev1alpha1.LogicalCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster", ResourceVersion: rv,
			Labels: tenancy.WithLifecycleLabels(map[string]string{"app": "x"}, inits, nil)}}
		out.Status.Phase = corev1alpha1.LogicalClusterPhaseInitializing
		out.Status.Initializers = inits
		return out
	}
	viaA := context.WithValue(context.Background(), contextKey{}, Target{Kind: Initializing, ID: a})

	// b released meanwhile (rv 2); a's write was made on rv 1: applied
	// to rv 2, the last initializer gone, the workspace Ready.
	sent := lc("1", b)
	sent.TypeMeta = metav1.TypeMeta{Kind: "LogicalCluster", APIVersion: corev1alpha1.SchemeGroupVersion.String()}
	got := RebaseRelease(viaA, lc("2", a), sent)
	out, ok := got.(*corev1alpha1.LogicalCluster)
	if !ok || out.ResourceVersion != "2" || len(out.Status.Initializers) != 0 ||
		out.Status.Phase != corev1alpha1.LogicalClusterPhaseReady || len(out.Labels) != 1 || out.Labels["app"] != "x" {
		t.Fatalf("rebased = %+v; want rv 2, no initializers, Ready, only the app label", got)
	}

	// Three initializers, c still there: a's removal keeps c and its label.
	const c = "root:c"
	out = RebaseRelease(viaA, lc("2", a, c), lc("1", b, c)).(*corev1alpha1.LogicalCluster)
	if out.ResourceVersion != "2" || len(out.Status.Initializers) != 1 || out.Status.Initializers[0] != c ||
		out.Status.Phase != corev1alpha1.LogicalClusterPhaseInitializing || out.Labels["app"] != "x" || len(out.Labels) != 2 {
		t.Fatalf("rebased = %+v; want rv 2, initializers [%s], Initializing, its label", out, c)
	}

	for _, tc := range []struct {
		name             string
		ctx              context.Context
		current, updated *corev1alpha1.LogicalCluster
	}{
		{"not through the initializing virtual workspace", context.Background(), lc("2", a), lc("1", b)},
		{"through the terminating one", context.WithValue(context.Background(), contextKey{}, Target{Kind: Terminating, ID: a}), lc("2", a), lc("1", b)},
		{"no conflict", viaA, lc("1", a, b), lc("1", b)},
		{"keeps its own initializer", viaA, lc("2", a), lc("1", a, b)},
		{"another initializer removed too", viaA, lc("2", a, c), lc("1", b)},
		{"status changed otherwise", viaA, lc("2", a), func() *corev1alpha1.LogicalCluster {
			u := lc("1", b)
			u.Status.URL = "https://elsewhere"
			return u
		}()},
		{"label changed", viaA, lc("2", a), func() *corev1alpha1.LogicalCluster {
			u := lc("1", b)
			u.Labels["app"] = "y"
			return u
		}()},
	} {
		if got := RebaseRelease(tc.ctx, tc.current, tc.updated); got != tc.updated {
			t.Errorf("%s: rebased to %+v; want the write as sent (a conflict)", tc.name, got)
		}
	}
}
