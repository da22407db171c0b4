package exec

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

func TestSplitters(t *testing.T) {
	for _, in := range []string{
		`{}`,
		`{"a":1,"b":"x,}]","c":{"d":[1,{"e":"\"}"}]},"f":null,"g":true,"h":-1.5e3}`,
		` { "a" : [ 1 , 2 ] , "b" : { } } `,
		`{"k\"ey":1}`,
		`{"a":"x\\\\","b":"\\\"","c":"\\\\\"q\""}`,
	} {
		got, ok := splitObject([]byte(in), nil)
		// With an index of the document the split is the same.
		if xb := []byte(in); indexJSON(xb) == nil {
			t.Errorf("indexJSON(%s) failed", in)
		} else if withIndex, ok2 := splitObject(xb, indexJSON(xb)); ok2 != ok || !reflect.DeepEqual(withIndex, got) {
			t.Errorf("splitObject(%s) with an index = %v, without %v", in, withIndex, got)
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Errorf("splitObject(%s) failed", in)
			continue
		}
		norm := func(m map[string]json.RawMessage) map[string]any {
			out := map[string]any{}
			for k, v := range m {
				var x any
				_ = json.Unmarshal(v, &x)
				out[k] = x
			}
			return out
		}
		gotMap := map[string]json.RawMessage{}
		for _, f := range got {
			gotMap[f.key] = f.val
		}
		if !reflect.DeepEqual(norm(gotMap), norm(want)) {
			t.Errorf("splitObject(%s) = %v, want %v", in, norm(gotMap), norm(want))
		}
		// Written back, it is the same object.
		back, _ := json.Marshal(got)
		var again map[string]json.RawMessage
		if err := json.Unmarshal(back, &again); err != nil || !reflect.DeepEqual(norm(again), norm(want)) {
			t.Errorf("rawObject.MarshalJSON of %s: %s (%v)", in, back, err)
		}
	}
	arr, ok := splitArray([]byte(`[1, "a]", {"b":[2]}, [3,4] ]`), nil)
	if !ok || len(arr) != 4 || string(arr[2]) != `{"b":[2]}` || string(arr[3]) != `[3,4]` {
		t.Errorf("splitArray: %q %v", arr, ok)
	}
	ab := []byte(`[1, "a]", {"b":[2]}, [3,4] ]`)
	if arr2, ok := splitArray(ab, indexJSON(ab)); !ok || !reflect.DeepEqual(arr2, arr) {
		t.Errorf("splitArray with an index: %q %v", arr2, ok)
	}
	for _, bad := range []string{`{"a":[1}`, `{"a":"x`, `]`, `{{}`} {
		if indexJSON([]byte(bad)) != nil {
			t.Errorf("indexJSON(%s) accepted it", bad)
		}
	}
	if _, ok := splitObject([]byte(`[1]`), nil); ok {
		t.Error("splitObject accepted an array")
	}
}

// listOf100 is a core's answer to a list of 100 configmaps, as the
// gateway's benchmark reads it (label, three data keys, managed fields).
func listOf100() []byte {
	var items []any
	for i := 0; i < 100; i++ {
		items = append(items, map[string]any{
			"metadata": map[string]any{"name": "cm-" + string(rune('a'+i%26)), "namespace": "default", "uid": "6f1c1a84-3f0e-4a53-9d57-0c6b1f3e2a10",
				"resourceVersion": "12345", "creationTimestamp": "2026-11-23T12:00:00Z", "labels": map[string]any{"app": "bench"},
				"annotations":   map[string]any{"kcp.io/cluster": "1ya5haxizo0ka9yo"},
				"managedFields": []any{map[string]any{"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "v1", "time": "2026-11-23T12:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:data": map[string]any{".": map[string]any{}, "f:a": map[string]any{}, "f:b": map[string]any{}, "f:c": map[string]any{}}}}}},
			"data": map[string]any{"a": "1", "b": "two", "c": "three \"quoted\" \\ value"},
		})
	}
	b, _ := json.Marshal(map[string]any{"kind": "ConfigMapList", "apiVersion": "v1", "metadata": map[string]any{"resourceVersion": "12345"}, "items": items})
	return b
}

// BenchmarkSplitList splits a list and each item's metadata and data, as
// a list query selecting those does.
func BenchmarkSplitList(b *testing.B) {
	body := listOf100()
	for _, indexed := range []bool{false, true} {
		b.Run(fmt.Sprintf("indexed=%v", indexed), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				var x *jsonIndex
				if indexed {
					x = indexJSON(body)
				}
				top, _ := splitObject(body, x)
				items, _ := splitArray(top.get("items"), x)
				for _, it := range items {
					o, _ := splitObject(it, x)
					if _, ok := splitObject(o.get("metadata"), x); !ok {
						b.Fatal("metadata")
					}
					if _, ok := splitObject(o.get("data"), x); !ok {
						b.Fatal("data")
					}
				}
			}
		})
	}
}
