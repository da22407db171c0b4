package listcache

import (
	"bytes"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
)

// kubeProtobuf is kube's protobuf serializer with streaming collection
// encoding, as the generic API server configures it.
func kubeProtobuf(t *testing.T) runtime.Serializer {
	t.Helper()
	codecs := serializer.NewCodecFactory(scheme.Scheme, serializer.WithStreamingCollectionEncodingToProtobuf())
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		t.Fatal("no protobuf serializer")
	}
	return info.Serializer
}

func encodeAlloc(t *testing.T, s runtime.EncoderWithAllocator, obj runtime.Object) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := s.EncodeWithAllocator(obj, &b, &runtime.Allocator{}); err != nil {
		t.Fatalf("encode %T: %v", obj, err)
	}
	return b.Bytes()
}

// TestProtobufSameBytesAsKube checks protobuf lists byte for byte against
// kube's streaming encoder, uncached and cached, and that the JSON and
// protobuf forms of an item are cached apart.
func TestProtobufSameBytesAsKube(t *testing.T) {
	kube := kubeProtobuf(t).(runtime.EncoderWithAllocator)
	cache := New(DefaultLimit)
	ours := NewProtobufSerializer(kubeProtobuf(t), cache)
	ourJSON := NewSerializer(kubeJSON(t), cache)

	list := &corev1.ConfigMapList{TypeMeta: metav1.TypeMeta{Kind: "ConfigMapList", APIVersion: "v1"}, ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "c"}}
	for i := range 300 { // more than 127 bytes of items: multi-byte lengths
		list.Items = append(list.Items, configMap(i, fmt.Sprint(10+i)))
	}
	list.Items[3].UID = ""
	encode(t, ourJSON, list) // fills the cache with the JSON forms first

	lists := map[string]runtime.Object{
		"configmaps":        list,
		"empty":             &corev1.ConfigMapList{TypeMeta: metav1.TypeMeta{Kind: "ConfigMapList", APIVersion: "v1"}},
		"nil items, no gvk": &rbacv1.RoleList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}},
		"rbac":              &rbacv1.ClusterRoleList{Items: []rbacv1.ClusterRole{{ObjectMeta: metav1.ObjectMeta{Name: "r", UID: "u", ResourceVersion: "7"}, Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}}}}}},
		"not a list":        &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}},
	}
	for name, obj := range lists {
		want := encodeAlloc(t, kube, obj)
		for round := range 2 {
			if got := encodeAlloc(t, ours, obj); !bytes.Equal(got, want) {
				t.Errorf("%s, encoding %d: %d bytes differ from kube's %d", name, round+1, len(got), len(want))
			}
			var plain bytes.Buffer
			if err := ours.Encode(obj, &plain); err != nil || !bytes.Equal(plain.Bytes(), want) {
				t.Errorf("%s, Encode without allocator: err %v, equal %v", name, err, bytes.Equal(plain.Bytes(), want))
			}
		}
	}
	// 299 configmaps and one cluster role, in both encodings.
	if got, want := cache.Len(), 2*299+1; got != want {
		t.Errorf("cache holds %d items, want %d", got, want)
	}
	list.Items[7].Data["k"] = "changed"
	list.Items[7].ResourceVersion = "1000"
	if got, want := encodeAlloc(t, ours, list), encodeAlloc(t, kube, list); !bytes.Equal(got, want) {
		t.Error("after a change: bytes differ from kube's")
	}
	var back corev1.ConfigMapList
	if _, _, err := kubeProtobuf(t).Decode(encodeAlloc(t, ours, list), nil, &back); err != nil || len(back.Items) != 300 || back.Items[7].Data["k"] != "changed" {
		t.Errorf("decoding our list: err %v, %d items", err, len(back.Items))
	}

	w := &writes{}
	if err := ours.Encode(list, w); err != nil {
		t.Fatal(err)
	}
	if len(w.sizes) < 2 || w.sizes[0] != 4 {
		t.Errorf("write sizes %v, want the 4-byte prefix written alone first", w.sizes)
	}
}

// TestConcurrentLists encodes one list from several goroutines in both
// encodings, with a cache small enough to rotate (run with -race).
func TestConcurrentLists(t *testing.T) {
	cache := New(64 * (entryOverhead + 600))
	ourJSON, ourProto := NewSerializer(kubeJSON(t), cache), NewProtobufSerializer(kubeProtobuf(t), cache)
	list := &corev1.ConfigMapList{}
	for i := range 100 {
		list.Items = append(list.Items, configMap(i, "1"))
	}
	wantJSON := encode(t, kubeJSON(t), list)
	wantProto := encodeAlloc(t, kubeProtobuf(t).(runtime.EncoderWithAllocator), list)
	errs := make(chan string, 8)
	for g := range 8 {
		go func() {
			for range 20 {
				var b bytes.Buffer
				if g%2 == 0 {
					if err := ourJSON.Encode(list, &b); err != nil || b.String() != wantJSON {
						errs <- fmt.Sprintf("JSON differs (err %v)", err)
						return
					}
				} else if err := ourProto.Encode(list, &b); err != nil || !bytes.Equal(b.Bytes(), wantProto) {
					errs <- fmt.Sprintf("protobuf differs (err %v)", err)
					return
				}
			}
			errs <- ""
		}()
	}
	for range 8 {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}
