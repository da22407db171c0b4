package lifecycle

import (
	"testing"
	"time"

	kcpcorev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func initializing(cluster, path string, initializers ...string) *kcpcorev1alpha1.LogicalCluster {
	lc := &kcpcorev1alpha1.LogicalCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster",
		Annotations: map[string]string{ClusterAnnotation: cluster, PathAnnotation: path}}}
	for _, i := range initializers {
		lc.Status.Initializers = append(lc.Status.Initializers, kcpcorev1alpha1.LogicalClusterInitializer(i))
	}
	return lc
}

// TestReleasedStaysReleased: a cluster is followed (its path known) while
// its LogicalCluster carries the initializer; once released, an event
// from before the release neither follows it again nor queues it.
func TestReleasedStaysReleased(t *testing.T) {
	w := &Watcher{Kind: Initializing, ID: "root:security",
		lcs: map[string]*kcpcorev1alpha1.LogicalCluster{}, clients: map[string]client.Client{}, released: map[string]time.Time{}}
	if !w.seen("c1", initializing("c1", "root:orgs:acme", "root:security"), false) {
		t.Fatal("a cluster carrying the initializer is not followed")
	}
	if p, ok := w.Path("c1"); !ok || p != "root:orgs:acme" {
		t.Fatalf("path of a followed cluster = %q, %v", p, ok)
	}
	if w.seen("c2", initializing("c2", "root:orgs:other", "root:other"), false) {
		t.Fatal("a cluster without the initializer is followed")
	}
	w.release("c1")
	if !w.isReleased("c1") {
		t.Fatal("released cluster not remembered")
	}
	if w.seen("c1", initializing("c1", "root:orgs:acme", "root:security"), false) {
		t.Fatal("an event from before the release follows the cluster again")
	}
	if _, ok := w.Path("c1"); ok {
		t.Fatal("a released cluster's path is still served from the watcher")
	}
}
