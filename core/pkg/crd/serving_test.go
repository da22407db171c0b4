package crd

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/conversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"
)

// fakeStorage stands in for etcd: building serving infos only needs it to
// be ready.
type fakeStorage struct{ storage.Interface }

func (fakeStorage) ReadinessCheck() error { return nil }

// recordingDecorator records the storage it was asked for.
type recordingDecorator struct {
	name     string
	prefixes []string
	codecs   map[string]runtime.Codec // by resource prefix
}

func (d *recordingDecorator) decorator() generic.StorageDecorator {
	return func(config *storagebackend.ConfigForResource, prefix string, _ func(runtime.Object) (string, error), _, _ func() runtime.Object,
		_ storage.AttrFunc, _ storage.IndexerFuncs, _ *cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
		d.prefixes = append(d.prefixes, prefix)
		if d.codecs == nil {
			d.codecs = map[string]runtime.Codec{}
		}
		d.codecs[prefix] = config.Codec
		return fakeStorage{}, func() {}, nil
	}
}

func newBuilder(t *testing.T) (*Builder, *recordingDecorator, *recordingDecorator) {
	t.Helper()
	converters, err := conversion.NewCRConverterFactory(nil, nil)
	if err != nil {
		t.Fatalf("converter factory: %v", err)
	}
	plain, cached := &recordingDecorator{name: "plain"}, &recordingDecorator{name: "cached"}
	return &Builder{Decorator: plain.decorator(), CachedDecorator: cached.decorator(), Converters: converters}, plain, cached
}

// widgetSchema knows spec.size (integer), spec.color (string, default
// "blue") and status.ready.
func widgetSchema() *apiextensionsv1.CustomResourceValidation {
	return &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"size":     {Type: "integer"},
				"color":    {Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"blue"`)}},
				"replicas": {Type: "integer"},
			}},
			"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"ready":    {Type: "boolean"},
				"replicas": {Type: "integer"},
			}},
		}}}
}

// widgets: namespaced, v1 (storage, status and scale, a printer column),
// v1beta1 (served), v1alpha1 (neither served nor stored).
func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	names := apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com", UID: "uid-1", ResourceVersion: "1"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: "example.com", Scope: apiextensionsv1.NamespaceScoped, Names: names,
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Schema: widgetSchema(),
					Subresources: &apiextensionsv1.CustomResourceSubresources{
						Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
						Scale:  &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"},
					},
					AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{{Name: "Size", Type: "integer", JSONPath: ".spec.size"}},
				},
				{Name: "v1beta1", Served: true, Schema: widgetSchema()},
				{Name: "v1alpha1", Served: false, Schema: widgetSchema()},
			}},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{AcceptedNames: names, StoredVersions: []string{"v1"},
			Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}}},
	}
}

func keys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func TestBuildScopes(t *testing.T) {
	b, plain, cached := newBuilder(t)
	crd := widgetCRD()
	info, err := b.build(crd, StoragePrefix(crd))
	if err != nil {
		t.Fatalf("build(widgets): %v", err)
	}
	if got, want := keys(info.scopes), []string{"v1", "v1beta1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("scopes for versions %v, want %v (served or stored only)", got, want)
	}
	if got, want := keys(info.storage), []string{"v1", "v1beta1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("registries for versions %v, want %v", got, want)
	}
	if len(cached.prefixes) != 0 || len(plain.prefixes) == 0 || plain.prefixes[0] != "/example.com/widgets" {
		t.Errorf("storage prefixes: plain decorator %v, cached %v; want /example.com/widgets from the plain decorator only", plain.prefixes, cached.prefixes)
	}

	for _, tc := range []struct {
		version        string
		status, scale  bool
		wantColumnName string
	}{
		{"v1", true, true, "Size"},
		{"v1beta1", false, false, "Age"},
	} {
		scope := info.scopes[tc.version]
		wantGVR := schema.GroupVersionResource{Group: "example.com", Version: tc.version, Resource: "widgets"}
		if scope.Resource != wantGVR || scope.Kind != wantGVR.GroupVersion().WithKind("Widget") || scope.HubGroupVersion != wantGVR.GroupVersion() {
			t.Errorf("%s: scope resource %v kind %v hub %v, want %v, Widget, its own group version", tc.version, scope.Resource, scope.Kind, scope.HubGroupVersion, wantGVR)
		}
		if scope.FieldManager == nil {
			t.Errorf("%s: scope has no field manager (server-side apply)", tc.version)
		}
		if _, ok := scope.Serializer.(negotiatedSerializer); !ok {
			t.Errorf("%s: scope serializer is %T, want the pruning negotiatedSerializer", tc.version, scope.Serializer)
		}
		st := info.storage[tc.version]
		if (st.Status != nil) != tc.status || (st.Scale != nil) != tc.scale {
			t.Errorf("%s: status registry %v, scale registry %v; want %v, %v", tc.version, st.Status != nil, st.Scale != nil, tc.status, tc.scale)
		}
		if status := info.status[tc.version]; status == nil || status.Subresource != "status" {
			t.Errorf("%s: status scope %+v, want one with subresource status", tc.version, status)
		}
		if scale := info.scale[tc.version]; (scale != nil) != tc.scale ||
			(scale != nil && (scale.Kind != schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"} || scale.Subresource != "scale")) {
			t.Errorf("%s: scale scope %+v, want one (%v) of kind autoscaling/v1 Scale", tc.version, scale, tc.scale)
		}

		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/" + tc.version, "kind": "Widget",
			"metadata": map[string]any{"name": "w", "namespace": "default", "creationTimestamp": "2020-01-01T00:00:00Z"},
			"spec":     map[string]any{"size": int64(3)}}}
		table, err := st.CustomResource.ConvertToTable(context.Background(), obj, nil)
		if err != nil {
			t.Fatalf("%s: table: %v", tc.version, err)
		}
		var names []string
		for _, c := range table.ColumnDefinitions {
			names = append(names, c.Name)
		}
		if want := []string{"Name", tc.wantColumnName}; !reflect.DeepEqual(names, want) {
			t.Errorf("%s: table columns %v, want %v", tc.version, names, want)
		}
	}
}

func TestBuildClusterScopedAndBound(t *testing.T) {
	b, plain, cached := newBuilder(t)
	crd := widgetCRD()
	crd.Spec.Scope = apiextensionsv1.ClusterScoped
	crd.Annotations = map[string]string{IdentityAnnotation: "abc123"}
	info, err := b.build(crd, StoragePrefix(crd))
	if err != nil {
		t.Fatalf("build(bound cluster-scoped widgets): %v", err)
	}
	if len(plain.prefixes) != 0 || len(cached.prefixes) == 0 || cached.prefixes[0] != "/example.com/widgets:abc123" {
		t.Errorf("storage prefixes: plain decorator %v, cached %v; want /example.com/widgets:abc123 from the cached decorator", plain.prefixes, cached.prefixes)
	}
	for v, scope := range info.scopes {
		if namer, ok := scope.Namer.(handlers.ContextBasedNaming); !ok || !namer.ClusterScoped {
			t.Errorf("%s: namer %#v, want a cluster-scoped ContextBasedNaming", v, scope.Namer)
		}
	}
}

func TestBuildRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*apiextensionsv1.CustomResourceDefinition)
		want   string
	}{
		{"no accepted names yet", func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Status.AcceptedNames = apiextensionsv1.CustomResourceDefinitionNames{}
		}, "has no accepted names yet"},
		{"no storage version", func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Storage = false
		}, "storage version"},
		{"schema not structural", func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[1].Schema = &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"list": {Type: "array",
					Items: &apiextensionsv1.JSONSchemaPropsOrArray{JSONSchemas: []apiextensionsv1.JSONSchemaProps{{Type: "string"}}}}}}}
		}, "schema of widgets.example.com/v1beta1 is not structural"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, _, _ := newBuilder(t)
			crd := widgetCRD()
			tc.change(crd)
			_, err := b.build(crd, StoragePrefix(crd))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("build: err %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestRequestCodec decodes request bodies as the handlers do: unknown
// fields are pruned (and reported by the strict decoder), metadata is
// normalized and schema defaults are applied.
func TestRequestCodec(t *testing.T) {
	b, _, _ := newBuilder(t)
	crd := widgetCRD()
	info, err := b.build(crd, StoragePrefix(crd))
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	ns := info.scopes["v1"].Serializer
	body := []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","bogus":1},"spec":{"size":3,"shape":"round"}}`)
	gv := schema.GroupVersion{Group: "example.com", Version: "v1"}
	var media runtime.SerializerInfo
	for _, m := range ns.SupportedMediaTypes() {
		if m.MediaType == "application/json" {
			media = m
		}
	}
	if media.Serializer == nil || media.StrictSerializer == nil {
		t.Fatalf("no application/json serializer among %d media types", len(ns.SupportedMediaTypes()))
	}

	// The handlers decode into a new object of the scope's kind.
	obj, _, err := ns.DecoderToVersion(media.Serializer, gv).Decode(body, nil, &unstructured.Unstructured{})
	if err != nil {
		t.Fatalf("lax decode: %v", err)
	}
	u := obj.(*unstructured.Unstructured)
	wantSpec := map[string]any{"size": int64(3), "color": "blue"}
	if spec, _, _ := unstructured.NestedMap(u.Object, "spec"); !reflect.DeepEqual(spec, wantSpec) {
		t.Errorf("lax decode: spec %v, want %v (shape pruned, color defaulted)", spec, wantSpec)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "bogus"); found {
		t.Errorf("lax decode: metadata.bogus kept, want it dropped")
	}

	_, _, err = ns.DecoderToVersion(media.StrictSerializer, gv).Decode(body, nil, &unstructured.Unstructured{})
	if !runtime.IsStrictDecodingError(err) || !strings.Contains(err.Error(), `unknown field "spec.shape"`) || !strings.Contains(err.Error(), `unknown field "metadata.bogus"`) {
		t.Errorf("strict decode: err %v, want a strict decoding error naming spec.shape and metadata.bogus", err)
	}
}

// TestStorageCodec stores objects in the storage version and reads them
// back in the version served, defaulted.
func TestStorageCodec(t *testing.T) {
	b, plain, _ := newBuilder(t)
	crd := widgetCRD()
	if _, err := b.build(crd, StoragePrefix(crd)); err != nil {
		t.Fatalf("build: %v", err)
	}
	codec := plain.codecs["/example.com/widgets"]
	if codec == nil {
		t.Fatalf("the decorator got no codec for /example.com/widgets (got %v)", keys(plain.codecs))
	}
	in := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w"}, "spec": map[string]any{"size": int64(3)}}}
	data, err := runtime.Encode(codec, in)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	if !strings.Contains(string(data), `"apiVersion":"example.com/v1"`) {
		t.Errorf("stored %s, want it in the storage version example.com/v1", data)
	}
	out, err := runtime.Decode(codec, data)
	if err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
	if color, _, _ := unstructured.NestedString(out.(*unstructured.Unstructured).Object, "spec", "color"); color != "blue" {
		t.Errorf("read back %v, want spec.color defaulted to blue", out)
	}
}
