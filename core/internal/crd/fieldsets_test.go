package crd

import (
	"bytes"
	"reflect"
	goruntime "runtime"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/versioning"
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

// BenchmarkStorageDecode reads an Account as stored (managedFields of two
// managers) through the storage codec: "shared" as served (in-place
// conversion, shared field sets), "copied" as before (the safe converter's
// deep copy, a tree per object). Reports the bytes each object keeps.
func BenchmarkStorageDecode(b *testing.B) {
	builder, plain, _ := newBuilder(&testing.T{})
	crd := widgetCRD()
	if _, err := builder.build(crd, StoragePrefix(crd)); err != nil {
		b.Fatalf("build: %v", err)
	}
	safe, _, err := builder.Converters.NewConverter(crd)
	if err != nil {
		b.Fatal(err)
	}
	s := schemas{byVersion: map[string]*structuralschema.Structural{}, gk: schema.GroupKind{Group: "example.com", Kind: "Widget"}}
	gv := schema.GroupVersion{Group: "example.com", Version: "v1"}
	copied := versioning.NewCodec(unstructured.UnstructuredJSONScheme, unstructured.UnstructuredJSONScheme, safe, creator{},
		crdserverscheme.NewUnstructuredObjectTyper(), defaulter{schemas: s}, gv, gv, "old")
	data := []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"annotations":{"kcp.io/cluster":"1nq86kusaj15aio8"},` +
		`"creationTimestamp":"2026-11-28T13:58:20Z","finalizers":["account.core.platform-mesh.io/finalizer"],"generation":1,"managedFields":[` +
		`{"apiVersion":"example.com/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{".":{},"f:displayName":{},"f:type":{}}},"manager":"meshplane-bench","operation":"Update","time":"2026-11-28T13:58:20Z"},` +
		`{"apiVersion":"example.com/v1","fieldsType":"FieldsV1","fieldsV1":{"f:status":{".":{},"f:conditions":{".":{},` +
		`"k:{\"type\":\"Ready\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:observedGeneration":{},"f:reason":{},"f:status":{},"f:type":{}},` +
		`"k:{\"type\":\"WorkspaceReady\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:observedGeneration":{},"f:reason":{},"f:status":{},"f:type":{}}},` +
		`"f:observedGeneration":{}}},"manager":"account-operator","operation":"Update","subresource":"status","time":"2026-11-28T13:58:21Z"}],` +
		`"name":"bn3l2-a0000","uid":"44fbb3b3-b9dd-4d3b-af90-81540cda388b"},"spec":{"size":3},"status":{"ready":true}}`)
	for _, c := range []struct {
		name  string
		codec runtime.Codec
	}{{"shared", plain.codecs["/example.com/widgets"]}, {"copied", copied}} {
		b.Run(c.name, func(b *testing.B) {
			keep := make([]runtime.Object, 0, b.N)
			var before, after goruntime.MemStats
			goruntime.GC()
			goruntime.ReadMemStats(&before)
			for b.Loop() {
				obj, err := runtime.Decode(c.codec, data)
				if err != nil {
					b.Fatal(err)
				}
				keep = append(keep, obj)
			}
			goruntime.GC()
			goruntime.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(keep)), "kept-B/obj")
			goruntime.KeepAlive(keep)
		})
	}
}
