package crd

import (
	"bytes"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestStorageCodecSharesFieldSets: objects read from storage whose
// managedFields carry equal field sets share one tree for them, unequal
// sets stay apart, and what is read encodes back byte for byte (clients
// see the managedFields that were stored).
func TestStorageCodecSharesFieldSets(t *testing.T) {
	b, plain, _ := newBuilder(t)
	crd := widgetCRD()
	if _, err := b.build(crd, StoragePrefix(crd)); err != nil {
		t.Fatalf("build: %v", err)
	}
	codec := plain.codecs["/example.com/widgets"]
	stored := func(name, field string) []byte {
		return []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"managedFields":[` +
			`{"apiVersion":"example.com/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{".":{},"f:` + field + `":{}}},"manager":"m","operation":"Update","time":"2026-11-28T13:58:20Z"}],` +
			`"name":"` + name + `"},"spec":{"color":"red","size":3}}`)
	}
	decode := func(data []byte) *unstructured.Unstructured {
		t.Helper()
		out, err := runtime.Decode(codec, data)
		if err != nil {
			t.Fatalf("decode %s: %v", data, err)
		}
		return out.(*unstructured.Unstructured)
	}
	fieldSet := func(u *unstructured.Unstructured) uintptr {
		t.Helper()
		entries, _, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "managedFields")
		set := entries.([]any)[0].(map[string]any)["fieldsV1"]
		return reflect.ValueOf(set).Pointer()
	}
	a, b2, other := decode(stored("a", "size")), decode(stored("b", "size")), decode(stored("c", "color"))
	if fieldSet(a) != fieldSet(b2) {
		t.Error("two objects with equal field sets hold a tree each")
	}
	if fieldSet(a) == fieldSet(other) {
		t.Error("objects with different field sets share one")
	}
	for _, c := range []struct {
		u    *unstructured.Unstructured
		want []byte
	}{{a, stored("a", "size")}, {b2, stored("b", "size")}, {other, stored("c", "color")}} {
		got, err := runtime.Encode(codec, c.u)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		if !bytes.Equal(bytes.TrimSpace(got), c.want) {
			t.Errorf("read back and encoded\n%s\nwant\n%s", got, c.want)
		}
	}
}
