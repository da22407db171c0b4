package lifecycle

import (
	"context"
	"testing"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

func TestFilterTerminating(t *testing.T) {
	now := metav1.Now()
	live := &corev1alpha1.LogicalCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster", Annotations: map[string]string{"kcp.io/cluster": "a"}}}
	going := live.DeepCopy()
	going.DeletionTimestamp = &now
	terminating := context.WithValue(clusters.WithCluster(context.Background(), clusters.Wildcard), contextKey{}, Target{Kind: Terminating, ID: "root:t"})
	initializing := context.WithValue(clusters.WithCluster(context.Background(), clusters.Wildcard), contextKey{}, Target{Kind: Initializing, ID: "root:t"})

	list := &corev1alpha1.LogicalClusterList{Items: []corev1alpha1.LogicalCluster{*live, *going}}
	out, err := FilterList(terminating, list.DeepCopy())
	if err != nil || len(out.(*corev1alpha1.LogicalClusterList).Items) != 1 || out.(*corev1alpha1.LogicalClusterList).Items[0].DeletionTimestamp == nil {
		t.Errorf("terminating list: got %v (%v), want the deleted cluster only", out, err)
	}
	if out, _ := FilterList(initializing, list.DeepCopy()); len(out.(*corev1alpha1.LogicalClusterList).Items) != 2 {
		t.Errorf("initializing list filtered: %v", out)
	}
	if out, _ := FilterList(context.Background(), list.DeepCopy()); len(out.(*corev1alpha1.LogicalClusterList).Items) != 2 {
		t.Errorf("plain list filtered: %v", out)
	}

	in := watch.NewFake()
	w := FilterWatch(terminating, in)
	go func() {
		in.Add(live)     // created: not shown
		in.Modify(live)  // changed while live: not shown
		in.Modify(going) // deleted: MODIFIED, as kcp
		in.Delete(going) // terminator removed or gone
		in.Stop()
	}()
	var got []watch.EventType
	for e := range w.ResultChan() {
		got = append(got, e.Type)
	}
	if len(got) != 2 || got[0] != watch.Modified || got[1] != watch.Deleted {
		t.Errorf("terminating watch events = %v, want [MODIFIED DELETED]", got)
	}
	if plain := watch.NewFake(); FilterWatch(initializing, plain) != plain {
		t.Error("an initializing watch was wrapped")
	}
}
