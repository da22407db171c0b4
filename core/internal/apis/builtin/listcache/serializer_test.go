package listcache

import (
	"bytes"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
)

// kubeJSON is kube's JSON serializer with streaming collection encoding,
// as the generic API server configures it.
func kubeJSON(t *testing.T) runtime.Serializer {
	t.Helper()
	codecs := serializer.NewCodecFactory(scheme.Scheme, serializer.WithStreamingCollectionEncodingToJSON())
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok {
		t.Fatal("no JSON serializer")
	}
	return info.Serializer
}

func configMap(i int, rv string) corev1.ConfigMap {
	return corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("cm-%d", i), Namespace: "ns", UID: types.UID(fmt.Sprintf("uid-%d", i)),
			ResourceVersion: rv, Labels: map[string]string{"a": "b<&>"},
			Annotations: map[string]string{"kcp.io/cluster": "c1"},
		},
		Data: map[string]string{"k": fmt.Sprintf("value %d \u2028", i), "z": ""},
	}
}

func encode(t *testing.T, s runtime.Encoder, obj runtime.Object) string {
	t.Helper()
	var b bytes.Buffer
	if err := s.Encode(obj, &b); err != nil {
		t.Fatalf("encode %T: %v", obj, err)
	}
	return b.String()
}

// TestSameBytesAsKube checks that lists come out byte for byte as from
// kube's streaming encoder, on the first (uncached) and second (cached)
// encoding, and that a changed object is not served from the cache.
func TestSameBytesAsKube(t *testing.T) {
	kube := kubeJSON(t)
	cache := New(DefaultLimit)
	ours := NewSerializer(kube, cache)

	list := &corev1.ConfigMapList{TypeMeta: metav1.TypeMeta{Kind: "ConfigMapList", APIVersion: "v1"}, ListMeta: metav1.ListMeta{ResourceVersion: "42"}}
	for i := range 50 {
		list.Items = append(list.Items, configMap(i, fmt.Sprint(10+i)))
	}
	list.Items[3].UID = ""                   // not cached
	list.Items[4].ResourceVersion = ""       // not cached
	list.Items[5].Data = map[string]string{} // empty map

	lists := map[string]runtime.Object{
		"configmaps":        list,
		"empty":             &corev1.ConfigMapList{TypeMeta: metav1.TypeMeta{Kind: "ConfigMapList", APIVersion: "v1"}},
		"nil items, no gvk": &rbacv1.RoleList{ListMeta: metav1.ListMeta{ResourceVersion: "1", Continue: "x", RemainingItemCount: new(int64)}},
		"rbac":              &rbacv1.ClusterRoleList{Items: []rbacv1.ClusterRole{{ObjectMeta: metav1.ObjectMeta{Name: "r", UID: "u", ResourceVersion: "7"}, Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}}}}}},
		"not a list":        &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}},
		"unstructured":      &unstructured.UnstructuredList{Object: map[string]any{"kind": "List", "apiVersion": "v1"}, Items: []unstructured.Unstructured{{Object: map[string]any{"a": "b"}}}},
	}
	for name, obj := range lists {
		want := encode(t, kube, obj)
		for round := range 2 {
			if got := encode(t, ours, obj); got != want {
				t.Errorf("%s, encoding %d:\n got %s\nwant %s", name, round+1, got, want)
			}
		}
	}
	if got, want := cache.Len(), 48+1; got != want {
		t.Errorf("cache holds %d items, want %d (every item with a UID and a resourceVersion)", got, want)
	}

	// A changed object has a new resourceVersion: it is encoded again.
	list.Items[7].Data["k"] = "changed"
	list.Items[7].ResourceVersion = "1000"
	if got, want := encode(t, ours, list), encode(t, kube, list); got != want {
		t.Errorf("after a change:\n got %s\nwant %s", got, want)
	}
	// The same UID and resourceVersion on another type is another item.
	meta := &metav1.PartialObjectMetadataList{Items: []metav1.PartialObjectMetadata{{ObjectMeta: list.Items[0].ObjectMeta}}}
	if got, want := encode(t, ours, meta), encode(t, kube, meta); got != want {
		t.Errorf("partial object metadata:\n got %s\nwant %s", got, want)
	}
}

// TestFirstWriteAlone checks that a list's first write is "{" alone: kube's
// response writer recognises a streamed body (and decides on gzip) by it.
func TestFirstWriteAlone(t *testing.T) {
	ours := NewSerializer(kubeJSON(t), New(DefaultLimit))
	list := &corev1.ConfigMapList{Items: []corev1.ConfigMap{configMap(1, "1"), configMap(2, "2")}}
	w := &writes{}
	if err := ours.Encode(list, w); err != nil {
		t.Fatal(err)
	}
	if len(w.sizes) < 2 || w.sizes[0] != 1 {
		t.Errorf("write sizes %v, want a first write of 1 byte", w.sizes)
	}
}

type writes struct{ sizes []int }

func (w *writes) Write(p []byte) (int, error) {
	w.sizes = append(w.sizes, len(p))
	return len(p), nil
}

// TestCacheBounded checks that the cache stays under its limit and keeps
// what is read again.
func TestCacheBounded(t *testing.T) {
	c := New(100 * (entryOverhead + 10))
	hot := key{uid: "hot", resourceVersion: "1"}
	c.put(hot, make([]byte, 10))
	for i := range 1000 {
		c.put(key{uid: types.UID(fmt.Sprint(i)), resourceVersion: "1"}, make([]byte, 10))
		if _, ok := c.get(hot); !ok {
			t.Fatalf("hot entry dropped after %d puts", i)
		}
	}
	if n := c.Len(); n > 100 {
		t.Errorf("cache holds %d entries, limit is 100", n)
	}
	// A newer version of an object replaces the older one.
	n := c.Len()
	c.put(key{uid: "hot", resourceVersion: "2"}, make([]byte, 10))
	if _, ok := c.get(hot); ok || c.Len() != n {
		t.Errorf("after a newer version: old version cached %v, %d entries (want %d)", ok, c.Len(), n)
	}
	c.put(key{uid: "huge"}, make([]byte, c.limit))
	if _, ok := c.get(key{uid: "huge"}); ok {
		t.Error("an entry larger than half the limit was cached")
	}
}
