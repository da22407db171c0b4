package clusterstore

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// TestSharedIsTheCachesObject: two watchers of a watch cache get, through
// Shared, the one object the cache holds (no copy each), with the content
// GetObject's copy has.
func TestSharedIsTheCachesObject(t *testing.T) {
	backend := startBackend(t)
	ctx := clusters.WithCluster(context.Background(), "a")
	configmaps := cachedStore(t, backend, "configmaps", func() runtime.Object { return &corev1.ConfigMap{} }, func() runtime.Object { return &corev1.ConfigMapList{} })
	waitCacheReady(t, ctx, configmaps, "/configmaps", &corev1.ConfigMapList{})
	opts := storage.ListOptions{ResourceVersion: "0", Recursive: true, Predicate: storage.Everything}
	var watches []watch.Interface
	for range 2 {
		w, err := configmaps.Watch(ctx, "/configmaps", opts)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		watches = append(watches, w)
	}
	if err := configmaps.Create(ctx, "/configmaps/default/x", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "default"},
		Data: map[string]string{"k": "v"}}, &corev1.ConfigMap{}, 0); err != nil {
		t.Fatal(err)
	}
	var got []*corev1.ConfigMap
	for _, w := range watches {
		select {
		case e := <-w.ResultChan():
			c, ok := e.Object.(runtime.CacheableObject)
			if !ok {
				t.Fatalf("event object %T is not the cache's wrapper: the test no longer covers it", e.Object)
			}
			cm, ok := Shared(e.Object).(*corev1.ConfigMap)
			if !ok {
				t.Fatalf("Shared returned %T", Shared(e.Object))
			}
			if !equality.Semantic.DeepEqual(cm, c.GetObject()) {
				t.Errorf("Shared returned %+v, GetObject %+v", cm, c.GetObject())
			}
			got = append(got, cm)
		case <-time.After(30 * time.Second):
			t.Fatal("no event")
		}
	}
	if got[0] != got[1] {
		t.Error("two watchers got a copy each of one cached object")
	}
	if plain := (&corev1.ConfigMap{}); Shared(plain) != plain {
		t.Error("an object that is not wrapped was not returned as it is")
	}
}
