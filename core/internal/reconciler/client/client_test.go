package client

import (
	"context"
	"testing"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// reader serves cached and live objects from two maps and counts the
// live reads.
type reader struct {
	cached, live map[string]*corev1.ConfigMap
	liveReads    int
}

func (r *reader) lookup(m map[string]*corev1.ConfigMap, name string) (*corev1.ConfigMap, error) {
	if o, ok := m[name]; ok {
		return o, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("configmaps"), name)
}

func (r *reader) Get(_ context.Context, _, _, name string) (*corev1.ConfigMap, error) {
	r.liveReads++
	return r.lookup(r.live, name)
}

func (r *reader) GetCached(_ context.Context, _, _, name string) (*corev1.ConfigMap, error) {
	return r.lookup(r.cached, name)
}

func (r *reader) List(context.Context, string, string, *metainternalversion.ListOptions) (runtime.Object, error) {
	return nil, nil
}

func cm(name, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: rv,
		Annotations: map[string]string{"kcp.io/cluster": "c1"}}}
}

func TestCachedOrLive(t *testing.T) {
	r := &reader{cached: map[string]*corev1.ConfigMap{"a": cm("a", "1")},
		live: map[string]*corev1.ConfigMap{"a": cm("a", "2"), "b": cm("b", "3")}}
	if got, err := CachedOrLive[*corev1.ConfigMap](context.Background(), r, "c1", "", "a"); err != nil || got.ResourceVersion != "1" || r.liveReads != 0 {
		t.Fatalf("cached object: %v %v, %d live reads", got, err, r.liveReads)
	}
	// Not in the cache yet: storage answers.
	if got, err := CachedOrLive[*corev1.ConfigMap](context.Background(), r, "c1", "", "b"); err != nil || got.ResourceVersion != "3" || r.liveReads != 1 {
		t.Fatalf("new object: %v %v, %d live reads", got, err, r.liveReads)
	}
	if _, err := CachedOrLive[*corev1.ConfigMap](context.Background(), r, "c1", "", "c"); !apierrors.IsNotFound(err) {
		t.Fatalf("missing object: %v", err)
	}
}

func TestStoredOrLive(t *testing.T) {
	store := cache.NewIndexer(kcpcache.MetaClusterNamespaceKeyFunc, cache.Indexers{})
	if err := store.Add(cm("a", "5")); err != nil {
		t.Fatal(err)
	}
	r := &reader{live: map[string]*corev1.ConfigMap{"a": cm("a", "4"), "b": cm("b", "6")}}
	if got, err := StoredOrLive[*corev1.ConfigMap](context.Background(), store, r, "c1", "", "a"); err != nil || got.ResourceVersion != "5" || r.liveReads != 0 {
		t.Fatalf("stored object: %v %v, %d live reads", got, err, r.liveReads)
	}
	// Another cluster's object of that name is not this one.
	if _, err := StoredOrLive[*corev1.ConfigMap](context.Background(), store, r, "c2", "", "x"); !apierrors.IsNotFound(err) || r.liveReads != 1 {
		t.Fatalf("other cluster: %v, %d live reads", err, r.liveReads)
	}
	if got, err := StoredOrLive[*corev1.ConfigMap](context.Background(), store, r, "c1", "", "b"); err != nil || got.ResourceVersion != "6" {
		t.Fatalf("object not in the store: %v %v", got, err)
	}
}
