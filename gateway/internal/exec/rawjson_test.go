package exec

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestSplitters(t *testing.T) {
	for _, in := range []string{
		`{}`,
		`{"a":1,"b":"x,}]","c":{"d":[1,{"e":"\"}"}]},"f":null,"g":true,"h":-1.5e3}`,
		` { "a" : [ 1 , 2 ] , "b" : { } } `,
		`{"k\"ey":1}`,
	} {
		got, ok := splitObject([]byte(in))
		var want rawObject
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Errorf("splitObject(%s) failed", in)
			continue
		}
		norm := func(ro rawObject) map[string]any {
			out := map[string]any{}
			for k, v := range ro {
				var x any
				_ = json.Unmarshal(v, &x)
				out[k] = x
			}
			return out
		}
		if !reflect.DeepEqual(norm(got), norm(want)) {
			t.Errorf("splitObject(%s) = %v, want %v", in, norm(got), norm(want))
		}
	}
	arr, ok := splitArray([]byte(`[1, "a]", {"b":[2]}, [3,4] ]`))
	if !ok || len(arr) != 4 || string(arr[2]) != `{"b":[2]}` || string(arr[3]) != `[3,4]` {
		t.Errorf("splitArray: %q %v", arr, ok)
	}
	if _, ok := splitObject([]byte(`[1]`)); ok {
		t.Error("splitObject accepted an array")
	}
}
