package listcache

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
)

// Serializer is a JSON serializer whose typed lists are written item by
// item (byte for byte what kube's streaming collection encoder writes)
// with the items' bytes taken from a Cache. Everything else, and lists of
// another shape, go to the wrapped serializer.
type Serializer struct {
	runtime.Serializer
	cache *Cache
}

// NewSerializer wraps json, a non-pretty JSON serializer.
func NewSerializer(json runtime.Serializer, cache *Cache) *Serializer {
	return &Serializer{Serializer: json, cache: cache}
}

// writeBuffer batches the many small writes of a list.
const writeBuffer = 32 << 10

// Encode writes obj as JSON.
func (s *Serializer) Encode(obj runtime.Object, w io.Writer) error {
	tm, lm, items, ok := listParts(obj)
	if !ok {
		return s.Serializer.Encode(obj, w)
	}
	// The first write is "{" alone, as from kube's streaming encoder: the
	// response writer recognises streaming by it and buffers what follows
	// until it knows whether the response is large enough to compress.
	if _, err := io.WriteString(w, "{"); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, writeBuffer)
	if tm.Kind != "" {
		if err := writePair(bw, "kind", tm.Kind, ","); err != nil {
			return err
		}
	}
	if tm.APIVersion != "" {
		if err := writePair(bw, "apiVersion", tm.APIVersion, ","); err != nil {
			return err
		}
	}
	if err := writePair(bw, "metadata", lm, ","); err != nil {
		return err
	}
	if items == nil { // a nil Items field, as kube's encoder writes it
		if _, err := bw.WriteString(`"items":null}` + "\n"); err != nil {
			return err
		}
		return bw.Flush()
	}
	if _, err := bw.WriteString(`"items":[`); err != nil {
		return err
	}
	for i, item := range items {
		if i > 0 {
			if err := bw.WriteByte(','); err != nil {
				return err
			}
		}
		data, err := s.item(item)
		if err != nil {
			return err
		}
		if _, err := bw.Write(data); err != nil {
			return err
		}
	}
	if _, err := bw.WriteString("]}\n"); err != nil {
		return err
	}
	return bw.Flush()
}

// item is the JSON of one list item, from the cache when it has a UID and
// a resourceVersion (and no kind of its own: items of a typed list have
// none).
func (s *Serializer) item(item runtime.Object) ([]byte, error) {
	o, ok := item.(metav1.Object)
	if !ok || o.GetUID() == "" || o.GetResourceVersion() == "" || !item.GetObjectKind().GroupVersionKind().Empty() {
		return json.Marshal(item)
	}
	k := key{t: reflect.TypeOf(item), uid: o.GetUID(), resourceVersion: o.GetResourceVersion()}
	if data, ok := s.cache.get(k); ok {
		return data, nil
	}
	data, err := json.Marshal(item)
	if err != nil {
		return nil, err
	}
	s.cache.put(k, data)
	return data, nil
}

func writePair(w *bufio.Writer, name string, value any, suffix string) error {
	data, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", name, err)
	}
	if _, err := fmt.Fprintf(w, "%q:", name); err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		return err
	}
	_, err = w.WriteString(suffix)
	return err
}

// listParts splits a typed list shaped like every generated list type
// (TypeMeta inline, ListMeta as "metadata", Items as "items"; the shape
// kube's streaming encoder checks for) into its parts. ok is false for
// anything else: a non-list, an unstructured list, a type with its own
// MarshalJSON.
func listParts(obj runtime.Object) (tm metav1.TypeMeta, lm metav1.ListMeta, items []runtime.Object, ok bool) {
	if _, isMarshaler := obj.(json.Marshaler); isMarshaler {
		return tm, lm, nil, false
	}
	if _, isUnstructured := obj.(*unstructured.UnstructuredList); isUnstructured || !meta.IsListType(obj) {
		return tm, lm, nil, false
	}
	v, err := conversion.EnforcePtr(obj)
	if err != nil || v.Kind() != reflect.Struct {
		return tm, lm, nil, false
	}
	t := v.Type()
	if t.NumField() != 3 ||
		t.Field(0).Tag.Get("json") != ",inline" ||
		t.Field(1).Tag.Get("json") != "metadata,omitempty" ||
		t.Field(2).Tag.Get("json") != "items" {
		return tm, lm, nil, false
	}
	if tm, ok = v.Field(0).Interface().(metav1.TypeMeta); !ok {
		return tm, lm, nil, false
	}
	if lm, ok = v.Field(1).Interface().(metav1.ListMeta); !ok {
		return tm, lm, nil, false
	}
	items, err = meta.ExtractList(obj)
	if err != nil {
		return tm, lm, nil, false
	}
	return tm, lm, items, true
}

// negotiated is a negotiated serializer whose JSON serializer is wrapped.
type negotiated struct {
	runtime.NegotiatedSerializer
	infos []runtime.SerializerInfo
}

// Wrap serves ns with its JSON and protobuf serializers encoding lists
// through cache.
func Wrap(ns runtime.NegotiatedSerializer, cache *Cache) runtime.NegotiatedSerializer {
	infos := append([]runtime.SerializerInfo(nil), ns.SupportedMediaTypes()...)
	for i := range infos {
		if infos[i].Serializer == nil {
			continue
		}
		switch infos[i].MediaType {
		case runtime.ContentTypeJSON:
			infos[i].Serializer = NewSerializer(infos[i].Serializer, cache)
		case runtime.ContentTypeProtobuf:
			infos[i].Serializer = NewProtobufSerializer(infos[i].Serializer, cache)
		}
	}
	return negotiated{NegotiatedSerializer: ns, infos: infos}
}

func (n negotiated) SupportedMediaTypes() []runtime.SerializerInfo { return n.infos }
