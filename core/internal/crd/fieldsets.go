package crd

import (
	"encoding/json"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// fieldSets shares the managedFields field sets (fieldsV1) of the custom
// resources read from storage: objects written by the same managers
// through the same fields (every Account, every AccountInfo) carry equal
// sets, which unstructured decoding turns into trees of small maps, ~6 KB
// of an Account's ~12 KB in memory. Objects from storage are shared
// read-only (the watch cache hands them to every reader; whoever changes
// one deep-copies it first), so equal sets can be one tree. Clients see
// the same managedFields.
type fieldSets struct {
	mu     sync.Mutex
	byJSON map[string]map[string]any
	bytes  int
}

// maxFieldSetBytes bounds the keys the table holds; when full it starts
// over (sets already shared stay shared: the objects hold them).
const maxFieldSetBytes = 4 << 20

var sharedFieldSets = &fieldSets{byJSON: map[string]map[string]any{}}

// share replaces each fieldsV1 of u's managedFields by an equal shared one.
func (f *fieldSets) share(u *unstructured.Unstructured) {
	meta, _ := u.Object["metadata"].(map[string]any)
	entries, _ := meta["managedFields"].([]any)
	for _, e := range entries {
		entry, _ := e.(map[string]any)
		set, ok := entry["fieldsV1"].(map[string]any)
		if !ok {
			continue
		}
		key, err := json.Marshal(set)
		if err != nil {
			continue
		}
		f.mu.Lock()
		if shared, ok := f.byJSON[string(key)]; ok {
			entry["fieldsV1"] = shared
		} else {
			if f.bytes+len(key) > maxFieldSetBytes {
				clear(f.byJSON)
				f.bytes = 0
			}
			f.byJSON[string(key)] = set
			f.bytes += len(key)
		}
		f.mu.Unlock()
	}
}

// sharingDecoder shares the field sets of what its delegate decodes.
type sharingDecoder struct {
	runtime.Decoder
	sets *fieldSets
}

func (d sharingDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, gvk, err := d.Decoder.Decode(data, defaults, into)
	if err == nil {
		switch o := obj.(type) {
		case *unstructured.Unstructured:
			d.sets.share(o)
		case *unstructured.UnstructuredList:
			for i := range o.Items {
				d.sets.share(&o.Items[i])
			}
		}
	}
	return obj, gvk, err
}
