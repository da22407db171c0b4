package listcache

import (
	"bufio"
	"encoding/binary"
	"io"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
)

// ProtobufSerializer is the protobuf counterpart of Serializer: typed
// lists are written as kube's streaming protobuf encoder writes them, the
// items' bytes taken from the Cache.
type ProtobufSerializer struct {
	runtime.Serializer
	cache *Cache
}

// NewProtobufSerializer wraps proto, kube's protobuf serializer.
func NewProtobufSerializer(proto runtime.Serializer, cache *Cache) *ProtobufSerializer {
	return &ProtobufSerializer{Serializer: proto, cache: cache}
}

// protoPrefix starts every Kubernetes protobuf message ("k8s\x00").
var protoPrefix = []byte{0x6b, 0x38, 0x73, 0x00}

type protoMarshaler interface {
	Marshal() ([]byte, error)
}

// Encode writes obj as protobuf.
func (s *ProtobufSerializer) Encode(obj runtime.Object, w io.Writer) error {
	return s.EncodeWithAllocator(obj, w, nil)
}

// EncodeWithAllocator writes obj as protobuf; memAlloc serves the wrapped
// serializer (lists written here need none).
func (s *ProtobufSerializer) EncodeWithAllocator(obj runtime.Object, w io.Writer, memAlloc runtime.MemoryAllocator) error {
	lm, items, ok := protoListParts(obj)
	if !ok {
		if a, ok := s.Serializer.(runtime.EncoderWithAllocator); ok && memAlloc != nil {
			return a.EncodeWithAllocator(obj, w, memAlloc)
		}
		return s.Serializer.Encode(obj, w)
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	tm := runtime.TypeMeta{Kind: gvk.Kind, APIVersion: gvk.GroupVersion().String()}
	tmBytes, err := tm.Marshal()
	if err != nil {
		return err
	}
	lmBytes, err := lm.Marshal()
	if err != nil {
		return err
	}
	data := make([][]byte, len(items))
	raw := fieldSize(len(lmBytes))
	for i, item := range items {
		if data[i], err = s.item(item); err != nil {
			return err
		}
		raw += fieldSize(len(data[i]))
	}

	// The prefix alone first, as from kube's encoder: the response writer
	// recognises a streamed body by its first write.
	if _, err := w.Write(protoPrefix); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, writeBuffer)
	// runtime.Unknown: TypeMeta (1), Raw (2), ContentEncoding (3) and
	// ContentType (4), the last two empty; Raw is the list: ListMeta (1),
	// then every item (2).
	writeField(bw, 0xa, tmBytes)
	writeHeader(bw, 0x12, raw)
	writeField(bw, 0xa, lmBytes)
	for _, d := range data {
		writeField(bw, 0x12, d)
	}
	writeField(bw, 0x1a, nil)
	writeField(bw, 0x22, nil)
	return bw.Flush() // bufio keeps the first write error
}

// item is the protobuf of one list item, cached as Serializer.item.
func (s *ProtobufSerializer) item(item runtime.Object) ([]byte, error) {
	m := item.(protoMarshaler) // checked by protoListParts
	o, ok := item.(metav1.Object)
	if !ok || o.GetUID() == "" || o.GetResourceVersion() == "" || !item.GetObjectKind().GroupVersionKind().Empty() {
		return m.Marshal()
	}
	k := key{t: reflect.TypeOf(item), uid: o.GetUID(), resourceVersion: o.GetResourceVersion(), protobuf: true}
	if data, ok := s.cache.get(k); ok {
		return data, nil
	}
	data, err := m.Marshal()
	if err != nil {
		return nil, err
	}
	s.cache.put(k, data)
	return data, nil
}

func fieldSize(n int) int { return 1 + varintSize(uint64(n)) + n }

func varintSize(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

func writeHeader(w *bufio.Writer, tag byte, n int) {
	_ = w.WriteByte(tag)
	var b [binary.MaxVarintLen64]byte
	_, _ = w.Write(b[:binary.PutUvarint(b[:], uint64(n))])
}

func writeField(w *bufio.Writer, tag byte, data []byte) {
	writeHeader(w, tag, len(data))
	_, _ = w.Write(data)
}

// protoListParts is listParts for protobuf: the shape kube's streaming
// protobuf encoder checks for, with items that marshal themselves.
func protoListParts(obj runtime.Object) (lm metav1.ListMeta, items []runtime.Object, ok bool) {
	if !meta.IsListType(obj) {
		return lm, nil, false
	}
	v, err := conversion.EnforcePtr(obj)
	if err != nil || v.Kind() != reflect.Struct {
		return lm, nil, false
	}
	t := v.Type()
	if t.NumField() != 3 ||
		t.Field(0).Tag.Get("protobuf") != "" ||
		t.Field(1).Tag.Get("protobuf") != "bytes,1,opt,name=metadata" ||
		t.Field(2).Tag.Get("protobuf") != "bytes,2,rep,name=items" {
		return lm, nil, false
	}
	if _, ok = v.Field(0).Interface().(metav1.TypeMeta); !ok {
		return lm, nil, false
	}
	if lm, ok = v.Field(1).Interface().(metav1.ListMeta); !ok {
		return lm, nil, false
	}
	if items, err = meta.ExtractList(obj); err != nil {
		return lm, nil, false
	}
	for _, item := range items {
		if _, ok := item.(protoMarshaler); !ok {
			return lm, nil, false
		}
	}
	return lm, items, true
}
